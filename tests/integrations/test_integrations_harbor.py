"""Harbor (0.25) on sweworld: ``harbor run -e sweworld.integrations.harbor:SweworldEnvironment``.

Harbor tasks are written here in Harbor's layout, in the form of Harbor's SWE-bench adapter (a
``FROM swebench/sweb.eval.x86_64.<org>_1776_<repo>-<n>`` Dockerfile or task.toml ``docker_image``;
``solution/solve.sh`` applies the gold patch; ``tests/test.sh`` activates conda's ``testbed``, runs the
instance's tests and writes ``/logs/verifier/reward.txt``), for shipped ``lite`` instances. Harbor's
own CLI, agents (``oracle``, ``nop``) and verifier run them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("harbor")

from harbor.environments.base import SandboxBuildFailedError
from harbor.models.task.task import Task as HarborTask
from harbor.models.trial.paths import TrialPaths
from harbor.verifier.verifier import Verifier

from infra_failure import DIE, dies_on_marker
from sweworld.core.errors import ConfigError
from sweworld.integrations.episodes import load_task
from sweworld.integrations.harbor import EpisodeError, SweworldEnvironment
from sweworld.integrations.harbor_paths import PROBE, ROOTS, SCRATCH, PathMap, image_of
from sweworld.integrations.shell_state import stateless
from sweworld.testing.isolation import check_isolation

pytestmark = [pytest.mark.py312]


def real(test):
    """A test on real episodes: bubblewrap, PyPI (the instance's build), one xdist worker for them all."""
    for mark in (pytest.mark.bwrap, pytest.mark.network, pytest.mark.xdist_group("harbor")):
        test = mark(test)
    return test


ID = "boltons-24.0.0__change_arith_op__a5f686dc"
ENV = "sweworld.integrations.harbor:SweworldEnvironment"
#: the sandbox without writable Harbor directories, so that the environment maps them (harbor_paths)
NO_SCRATCH = {"sandbox": {"scratch_dirs": []}}

PARSER = '''import json, sys
log, tests = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
status = {}
for line in log.splitlines():  # pytest -rA's summary, read as SWE-bench's parse_log_pytest reads it
    if line.startswith(("PASSED", "FAILED", "ERROR", "XFAIL", "XPASS", "SKIPPED")):
        parts = (line.replace(" - ", " ") if line.startswith("FAILED") else line).split()
        if len(parts) > 1:
            status[parts[1]] = parts[0]
failing = {k: [t for t in tests[k] if status.get(t) not in ("PASSED", "XFAIL")] for k in ("FAIL_TO_PASS", "PASS_TO_PASS")}
print(json.dumps({"failing": failing}))
sys.exit(1 if any(failing.values()) else 0)
'''


def image(instance_id: str) -> str:
    return "swebench/sweb.eval.x86_64." + instance_id.replace("__", "_1776_") + ":latest"


def write_task(root: Path, instance_id: str = ID, *, form: str = "dockerfile", name_image: str | None = None) -> Path:
    """A Harbor task for ``instance_id`` (its image in ``environment/Dockerfile`` or in task.toml)."""
    task = load_task(instance_id, "lite") if name_image is None else None
    named = name_image or image(instance_id)
    d = root / (instance_id if task else "task")
    for sub in ("environment", "tests", "solution"):
        (d / sub).mkdir(parents=True)
    toml_image = f'docker_image = "{named}"\n' if form == "toml" else ""
    (d / "task.toml").write_text('schema_version = "1.4"\n\n[metadata]\ndifficulty = "easy"\n\n[verifier]\n'
                                 'timeout_sec = 1800.0\n\n[agent]\ntimeout_sec = 1800.0\n\n[environment]\n'
                                 f'build_timeout_sec = 1800.0\n{toml_image}')
    if form == "dockerfile":
        (d / "environment" / "Dockerfile").write_text(f"FROM {named}\nWORKDIR /testbed\n")
    (d / "instruction.md").write_text(task.problem_statement if task else "nothing")
    patch = task.patch if task else ""
    (d / "solution" / "solve.sh").write_text(
        f"#!/bin/bash\nset -euo pipefail\ncd /testbed\ngit apply --verbose - <<'__SOLUTION__'\n{patch}\n__SOLUTION__\n")
    tests = {"FAIL_TO_PASS": task.FAIL_TO_PASS, "PASS_TO_PASS": task.PASS_TO_PASS} if task else {}
    (d / "tests" / "config.json").write_text(json.dumps(tests))
    (d / "tests" / "parser.py").write_text(PARSER)
    files = sorted({t.split("::")[0] for t in tests.get("FAIL_TO_PASS", []) + tests.get("PASS_TO_PASS", [])})
    test_patch = (f"git apply -v - <<'__TEST_PATCH__'\n{task.test_patch}\n__TEST_PATCH__\n"
                  if task and task.test_patch.strip() else "")
    (d / "tests" / "test.sh").write_text(
        "#!/bin/bash\nset -uo pipefail -x\nLOG_FILE=$(mktemp)\nsource /opt/miniconda3/bin/activate\n"
        f"conda activate testbed\ncd /testbed\n{test_patch}: '>>>>> Start Test Output'\n"
        f"{task.test_cmd if task else 'pytest -rA'} {' '.join(files)} 2>&1 | tee \"$LOG_FILE\"\n"
        ": '>>>>> End Test Output'\nset +x\npython /tests/parser.py \"$LOG_FILE\" /tests/config.json\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n")
    return d


def harbor_run(task_dir: Path, agent: str, jobs: Path, *ek: str) -> tuple[dict, Path]:
    """``harbor run`` as a user types it; the trial's result.json and its directory."""
    harbor = shutil.which("harbor", path=str(Path(sys.executable).parent)) or "harbor"
    jobs.parent.mkdir(parents=True, exist_ok=True)
    command = [harbor, "run", "-p", str(task_dir), "-a", agent, "-e", ENV, "--ek", "dataset=lite",
               *[arg for kv in ek for arg in ("--ek", kv)], "-o", str(jobs), "--job-name", agent, "-y", "-q"]
    done = subprocess.run(command, cwd=jobs.parent, capture_output=True, text=True,
                          env={**os.environ, "HARBOR_TELEMETRY": "0"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [trial] = [p for p in (jobs / agent).iterdir() if p.is_dir()]
    return json.loads((trial / "result.json").read_text()), trial


def reward(result: dict) -> float:
    assert result["exception_info"] is None, result["exception_info"]
    return result["verifier_result"]["rewards"]["reward"]


def environment(task_dir: Path, tmp: Path, **ek) -> SweworldEnvironment:
    """The environment as Harbor's trial builds it (``EnvironmentFactory``'s keywords)."""
    task = HarborTask(task_dir)
    trial = TrialPaths(tmp / "trial")
    trial.mkdir()
    return SweworldEnvironment(environment_dir=task.paths.environment_dir, environment_name=task.short_name,
                               session_id=f"{task.short_name}__env", trial_paths=trial,
                               task_env_config=task.config.environment, dataset="lite", **ek)


# -- Harbor's agents through `harbor run` -----------------------------------------------------------
@pytest.mark.parametrize(("form", "ek"), [("dockerfile", []), ("toml", [f"backend_options={json.dumps(NO_SCRATCH)}"]),
                                          ("toml", ["grading=sweworld"])],
                         ids=["dockerfile-from", "docker-image-paths-mapped", "graded-by-sweworld"])
@real
def test_oracle_scores_one(tmp_path, form, ek):
    task_dir = write_task(tmp_path / "tasks", form=form)
    result, trial = harbor_run(task_dir, "oracle", tmp_path / "jobs", *ek)
    assert reward(result) == 1.0
    stdout = (trial / "verifier" / "test-stdout.txt").read_text()
    if ek == ["grading=sweworld"]:  # sweworld's harness in a fresh episode, on the oracle's diff
        assert stdout.startswith("sweworld real backend") and json.loads(stdout[stdout.index("{"):])["resolved"]
    else:  # the task's own test.sh
        assert '"failing": {"FAIL_TO_PASS": [], "PASS_TO_PASS": []}' in stdout and "416 passed" in stdout
    assert "Applied patch boltons/mathutils.py cleanly" in (trial / "agent" / "oracle.txt").read_text()


@real
def test_nop_scores_zero_on_real_and_sim_with_the_same_record(tmp_path):
    task_dir = write_task(tmp_path / "tasks", form="toml")
    real, real_trial = harbor_run(task_dir, "nop", tmp_path / "real" / "jobs")
    sim, sim_trial = harbor_run(task_dir, "nop", tmp_path / "sim" / "jobs", "backend=sim")
    assert reward(real) == 0.0 and reward(sim) == 0.0
    [line] = [x for x in (real_trial / "verifier" / "test-stdout.txt").read_text().splitlines()
              if x.startswith('{"failing"')]
    assert json.loads(line)["failing"] == {"FAIL_TO_PASS": ["tests/test_mathutils.py::test_bits"], "PASS_TO_PASS": []}
    stdout = (sim_trial / "verifier" / "test-stdout.txt").read_text()
    assert stdout.startswith("sweworld sim backend") and "resolved: False" in stdout
    assert json.loads(stdout[stdout.index("{"):])["simulated"] is True
    assert set(real) == set(sim) and set(real["verifier_result"]) == set(sim["verifier_result"])


def test_an_unknown_instance_fails_its_trial_with_harbors_error(tmp_path):
    task_dir = write_task(tmp_path / "tasks", name_image=image("nobody__nothing-1"))
    result, _ = harbor_run(task_dir, "nop", tmp_path / "jobs")
    info = result["exception_info"]
    assert info["exception_type"] == "SandboxBuildFailedError"
    assert "nobody__nothing-1" in info["exception_message"] and "lite" in info["exception_message"]
    assert result["verifier_result"] is None


# -- the environment, as Harbor's trial drives it ---------------------------------------------------
def test_an_image_that_cannot_be_pulled_and_a_wrong_kwarg_are_one_clear_error(tmp_path):
    # an image no dataset row names is a task of its own (its image the environment): here one that no
    # registry answers for, so the trial fails with the pull's one error, naming the image
    env = environment(write_task(tmp_path / "tasks", name_image="127.0.0.1:9/team/own-env:1"), tmp_path)
    with pytest.raises(SandboxBuildFailedError, match=r"could not open an episode of .*127\.0\.0\.1:9/team/own-env:1"):
        asyncio.run(env.start(force_build=False))
    with pytest.raises(EpisodeError, match="not running"):
        asyncio.run(env.exec("true"))
    with pytest.raises(ConfigError, match=r"unknown environment kwargs \['datset'\]"):
        environment(write_task(tmp_path / "other"), tmp_path / "o", datset="lite")
    with pytest.raises(ConfigError, match="grading='task' with the sim backend"):
        environment(write_task(tmp_path / "third"), tmp_path / "t", backend="sim", grading="task")
    with pytest.raises(ConfigError, match="audit_rat"):
        environment(write_task(tmp_path / "fourth"), tmp_path / "f", backend="hybrid", backend_options={"audit_rat": 1})


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("harbor-env")
    env = environment(write_task(tmp / "tasks"), tmp)
    asyncio.run(env.start(force_build=False))
    yield env
    asyncio.run(env.stop(delete=True))


def run(environment_: SweworldEnvironment, command: str, **kw):
    return asyncio.run(environment_.exec(command, **kw))


@real
def test_the_isolation_probes_pass_through_exec(started):
    def probe(command: str) -> tuple[int, str]:
        result = run(started, command)
        return result.return_code, result.stdout
    assert check_isolation(probe) == []


@real
def test_exec_is_one_command_like_docker_exec(started):
    assert run(started, "cd /tmp && export LEAK=1 && exit 3").return_code == 3
    assert run(started, "pwd; echo ${LEAK:-unset}").stdout == "/testbed\nunset\n"
    result = run(started, 'echo "$A|$B"; pwd', cwd="/logs/verifier", env={"A": "x y", "B": "$HOME"})
    assert result.stdout == "x y|$HOME\n/logs/verifier\n" and result.return_code == 0
    with pytest.raises(RuntimeError, match="timed out after 1 seconds"):
        run(started, "sleep 30", timeout_sec=1)
    assert run(started, "echo alive").stdout == "alive\n"


@real
def test_files_round_trip(started, tmp_path):
    source = tmp_path / "up"
    (source / "sub").mkdir(parents=True)
    (source / "run.sh").write_text("#!/bin/sh\necho ran > /logs/verifier/ran.txt\n")
    (source / "run.sh").chmod(0o755)
    (source / "sub" / "blob.bin").write_bytes(bytes(range(256)) * 4)
    asyncio.run(started.upload_dir(source, "/tests/up"))
    assert run(started, "/tests/up/run.sh && cat /logs/verifier/ran.txt").stdout == "ran\n"
    back = tmp_path / "back"
    asyncio.run(started.download_dir("/tests/up", back))
    assert (back / "sub" / "blob.bin").read_bytes() == bytes(range(256)) * 4
    assert (back / "run.sh").stat().st_mode & 0o777 == 0o755
    asyncio.run(started.upload_file(source / "sub" / "blob.bin", "/testbed/blob.bin"))
    asyncio.run(started.download_file("/testbed/blob.bin", tmp_path / "one.bin"))
    assert (tmp_path / "one.bin").read_bytes() == bytes(range(256)) * 4
    assert "blob.bin" in started.executor.diff()


@real
def test_harbors_paths_are_mapped_where_the_episode_cannot_write_them(tmp_path):
    env = environment(write_task(tmp_path / "tasks"), tmp_path, backend_options=NO_SCRATCH)
    asyncio.run(env.start(force_build=False))
    try:
        assert set(env.paths.mapped) == set(ROOTS)
        result = run(env, "echo x > reward.txt && cat /logs/verifier/reward.txt && pwd", cwd="/logs/verifier")
        assert result.stdout == "x\n/logs/verifier\n"
        assert env.executor.run(f"cat {SCRATCH}/logs/verifier/reward.txt").output == "x\n"
        assert env.executor.run("ls /logs").exit_code != 0  # the episode's root stays read-only
        asyncio.run(env.download_file("/logs/verifier/reward.txt", tmp_path / "reward.txt"))
        assert (tmp_path / "reward.txt").read_text() == "x\n"
    finally:
        asyncio.run(env.stop(delete=True))


@real
def test_a_dead_episode_is_one_clear_error(tmp_path):
    env = environment(write_task(tmp_path / "tasks"), tmp_path)
    asyncio.run(env.start(force_build=False))
    try:
        with dies_on_marker(), pytest.raises(EpisodeError, match="died"):
            run(env, DIE)  # its sandbox killed from the host
        with pytest.raises(EpisodeError, match="closed or died"):
            run(env, "echo hi")
    finally:
        asyncio.run(env.stop(delete=True))
    with pytest.raises(EpisodeError, match="not running"):
        run(env, "echo hi")


@pytest.mark.parametrize(("backend", "options"), [("sim", {}), ("hybrid", {"audit_rate": 1.0})])
@real
def test_harbors_verifier_on_sim_and_hybrid_episodes(tmp_path, backend, options):
    task_dir = write_task(tmp_path / "tasks")
    env = environment(task_dir, tmp_path, backend=backend, backend_options=options)
    asyncio.run(env.start(force_build=False))
    try:
        applied = run(env, f"git apply - <<'EOF'\n{load_task(ID, 'lite').patch}\nEOF")  # edits run for real
        assert applied.return_code == 0, applied.stdout
        verdict = asyncio.run(Verifier(task=HarborTask(task_dir), trial_paths=env.trial_paths, environment=env).verify())
        seen = [step.command for step in env.executor.history]  # what the world saw: exec's commands only
        assert any("git apply" in c for c in seen) and not any("tar -" in c or PROBE in c for c in seen), seen
    finally:
        asyncio.run(env.stop(delete=True))
    assert verdict.rewards == {"reward": 1.0}
    stdout = env.trial_paths.test_stdout_path.read_text()
    report = json.loads(stdout[stdout.index("{"):])
    assert stdout.startswith(f"sweworld {backend} backend") and report["resolved"] and report["simulated"]
    if backend == "hybrid":
        assert report["audits"]["evaluations"]["audited"] == 1


# -- the path map and the image, alone --------------------------------------------------------------
def test_the_path_map_rewrites_harbors_roots_only():
    paths = PathMap(ROOTS)
    command = "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1; ls /testbed/tests $HOME/logs ./logs /logsx"
    assert paths.command(command) == (f"({SCRATCH}/tests/test.sh) > {SCRATCH}/logs/verifier/test-stdout.txt 2>&1; "
                                      "ls /testbed/tests $HOME/logs ./logs /logsx")
    assert paths.path("/solution") == f"{SCRATCH}/solution" and paths.path("/testbed/x") == "/testbed/x"
    assert paths.restore(f"wrote {SCRATCH}/logs/agent/x and /tmp/other") == "wrote /logs/agent/x and /tmp/other"
    assert paths.content("/tests/test.sh", b"echo 1 > /logs/verifier/reward.txt") == \
        f"echo 1 > {SCRATCH}/logs/verifier/reward.txt".encode()
    assert paths.content("/tests/x.bin", b"\0/logs") == b"\0/logs"  # binary: as it is
    assert paths.content("/testbed/a.sh", b"/logs") == b"/logs"  # outside Harbor's roots: as it is
    off = PathMap()
    assert not off.active and off.command(command) == command and off.path("/logs") == "/logs"


def test_the_image_comes_from_task_toml_else_the_dockerfile(tmp_path):
    (tmp_path / "Dockerfile").write_text("# a comment\nFROM --platform=linux/amd64 " + image(ID) + " AS base\nRUN x\n")
    assert image_of(tmp_path, None) == image(ID)
    assert image_of(tmp_path, "swebench/sweb.eval.x86_64.a_1776_b-1:latest") == "swebench/sweb.eval.x86_64.a_1776_b-1:latest"
    assert image_of(tmp_path / "none", None) is None


@pytest.mark.parametrize("command", ["echo hi", "ls -la /tmp | grep x && cat f > /tmp/o 2>&1", "2>/dev/null ls",
                                     'pwd; echo "a;b" ">"', "tar -cf /tmp/a.tar -C /logs/verifier .", "echo $HOME"])
def test_commands_that_cannot_change_the_shell_skip_the_subshell(command):
    assert stateless(command)


@pytest.mark.parametrize("command", [
    "cd /tmp", "export A=1", "A=1 ls", "X+=1 ls", "set -e", "exit 3", "echo hi &", "(cd /x)", "{ ls; }", "ls;cd /",
    '"cd" /x', 'c"d" /', 'echo ">" ; cd /', 'echo \\"; cd /; \\"', "cat <<EOF\nx\nEOF", "echo $((x=1))",
    "echo ${x:=1}", "for i in 1; do ls; done", ". f", "echo $(cd /)", "2>/dev/null cd /tmp", "ls # c", "ls\ncd /",
    "kill -9 -1", 'echo "open', "! ls"])
def test_commands_that_may_change_the_shell_keep_it(command):
    assert not stateless(command)
