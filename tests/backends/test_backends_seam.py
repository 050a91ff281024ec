"""The backend seam: an in-memory fake passes the executor conformance suite, and tools, the agent
loop, grading, rollouts, evaluation runs, SWEEnv and the mini-swe-agent adapter run on it unchanged.
A real sandbox passes the same suite, and the tools' observations on it equal the fake's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.backends.fake import FakeBackend, FakeExecutor

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import NoopPolicy, OraclePolicy
from sweworld.backends import Backend
from sweworld.core.config import EvalConfig, RolloutConfig
from sweworld.core.types import Task
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import read_report
from sweworld.integrations.gym import SWEEnv
from sweworld.runs.eval import evaluate_run
from sweworld.runs.rollout import run_rollouts
from sweworld.testing import CHECKS, check_executor
from sweworld.tools import default_tools

FILES = {
    "pkg/__init__.py": "",
    "pkg/value.py": "VALUE = 1\n",
    "tests/test_value.py": "from pkg.value import VALUE\n\n\ndef test_value():\n    assert VALUE == 2\n",
    "README.md": "a tiny package\n",
}
GOLD = ("diff --git a/pkg/value.py b/pkg/value.py\nindex b15b1b0..c8fcecd 100644\n--- a/pkg/value.py\n"
        "+++ b/pkg/value.py\n@@ -1 +1 @@\n-VALUE = 1\n+VALUE = 2\n")
TASK = Task(instance_id="tiny__value-1", repo="tiny/value", base_commit="0" * 40, patch=GOLD,
            problem_statement="VALUE must be 2.", FAIL_TO_PASS=["tests/test_value.py::test_value"],
            PASS_TO_PASS=["tests/test_value.py::test_import"])


def backend() -> FakeBackend:
    return FakeBackend({TASK.instance_id: FILES})


def test_fake_passes_the_conformance_suite():
    assert isinstance(backend(), Backend)
    for persistent in (True, False):
        executor = FakeExecutor(FILES, persistent=persistent)
        assert check_executor(executor, workdir_file="pkg/value.py") == [name for name, _ in CHECKS]
        assert executor.closed


class _Forgetful(FakeExecutor):
    """Declares a persistent shell but starts every command in the workdir."""

    def run(self, command, *, cwd=None, timeout=None):
        return super().run(command, cwd=cwd or self.workdir, timeout=timeout)


class _Lenient(FakeExecutor):
    def read_file(self, path):
        try:
            return super().read_file(path)
        except FileNotFoundError:
            return ""


@pytest.mark.parametrize(("broken", "expectation"), [
    (_Forgetful, "persistence where declared"), (_Lenient, "missing path raises FileNotFoundError")])
def test_the_suite_names_what_a_broken_executor_breaks(broken, expectation):
    with pytest.raises(AssertionError, match=f"check_executor: .*{expectation}"):
        check_executor(broken(FILES), workdir_file="pkg/value.py")


def test_tools_on_the_fake():
    tools, ex = default_tools(), FakeExecutor(FILES)
    listing = tools.call(ex, "str_replace_editor", {"command": "view", "path": "/testbed"}).observation
    assert listing.endswith("/testbed/README.md\n/testbed/pkg/\n/testbed/pkg/__init__.py\n/testbed/pkg/value.py\n"
                            "/testbed/tests/\n/testbed/tests/test_value.py")
    found = tools.call(ex, "search", {"search_term": "VALUE"}).observation
    assert "Found 3 matches" in found and "/testbed/pkg/value.py (1 match)" in found
    edit = {"command": "str_replace", "path": "/testbed/pkg/value.py", "old_str": "1", "new_str": "2"}
    assert "has been edited" in tools.call(ex, "str_replace_editor", edit).observation
    assert ex.diff() == GOLD
    bash = tools.call(ex, "execute_bash", {"command": "cd pkg && cat value.py; python -V"})
    assert bash.observation == "VALUE = 2\nfake: not supported: python\n[exit code: 127]"
    assert tools.call(ex, "execute_bash", {"command": "pwd"}).observation == "/testbed/pkg\n[exit code: 0]"
    assert tools.call(ex, "str_replace_editor", {"command": "undo_edit", "path": "/testbed/pkg/value.py"})
    assert ex.diff() == "" and tools.call(ex, "submit", {}).submitted


@pytest.mark.parametrize(("policy", "rate"), [(OraclePolicy, 1.0), (NoopPolicy, 0.0)])
def test_rollouts_on_the_fake(tmp_path, policy, rate):
    fake = backend()
    summary = run_rollouts([TASK], policy, RolloutConfig(out=tmp_path), agent=load_agent_config(),
                           backend=fake)
    assert summary["resolve_rate"] == rate and summary["trajectories"] == 1
    assert summary["empty_patch_rate"] == 1.0 - rate
    traj = json.loads((tmp_path / "trajectories.jsonl").read_text().splitlines()[0])
    assert traj["backend"] == "fake" and traj["exit_status"] == "submitted"
    assert traj["patch"] == (GOLD if rate else "") and all(e.closed for e in fake.opened)


@pytest.mark.parametrize(("patch", "resolved", "applied", "f2p_failures", "p2p_failures"), [
    (GOLD, True, True, [], []),
    ("", False, False, None, None),
    (GOLD.replace("+VALUE = 2", "+VALUE = 3"), False, True, ["tests/test_value.py::test_value"],
     ["tests/test_value.py::test_import"]),
    (GOLD.replace("-VALUE = 1", "-VALUE = 0"), False, False, None, None),
])
def test_evaluate_run_grades_like_the_harness(tmp_path, patch, resolved, applied, f2p_failures, p2p_failures):
    prediction = Prediction(instance_id=TASK.instance_id, model_name_or_path="m", model_patch=patch)
    summary, path = evaluate_run([TASK], {TASK.instance_id: prediction},
                                 EvalConfig(run_id="seam", logs_dir=tmp_path / "logs", out=tmp_path),
                                 model="m", backend=backend())
    assert path == tmp_path / "m.seam.json" and json.loads(path.read_text()) == summary
    assert summary["resolved_ids"] == ([TASK.instance_id] if resolved else [])
    assert summary["empty_patch_ids"] == ([] if patch else [TASK.instance_id])
    directory = tmp_path / "logs" / "run_evaluation" / "seam" / "m" / TASK.instance_id
    expected = {"patch.diff", "run_instance.log", "report.json", "sweworld_report.json"}
    expected |= {"eval.sh", "test_output.txt"} if applied else set()
    assert {p.name for p in directory.iterdir()} == expected
    report = read_report(directory)
    assert report.resolved is resolved and report.patch_successfully_applied is applied
    body = json.loads((directory / "report.json").read_text())[TASK.instance_id]
    if f2p_failures is None:
        assert "tests_status" not in body
    else:
        assert body["tests_status"]["FAIL_TO_PASS"]["failure"] == f2p_failures
        assert body["tests_status"]["PASS_TO_PASS"]["failure"] == p2p_failures
        assert report.resolution == ("RESOLVED_FULL" if resolved else "RESOLVED_NO")


def test_gym_env_on_the_fake():
    env = SWEEnv([TASK], backend=backend())
    try:
        obs, info = env.reset()
        assert obs == TASK.problem_statement and info["workdir"] == "/testbed"
        for name, args, _ in OraclePolicy().actions(TASK):
            _, reward, terminated, _, info = env.step({"tool": name, "arguments": args})
            assert not info["format_error"] and not terminated and reward == 0.0
        _, reward, terminated, truncated, info = env.step({"tool": "submit", "arguments": {}})
        assert (reward, terminated, truncated) == (1.0, True, False) and info["patch"] == GOLD
        env.reset()
        _, reward, terminated, _, info = env.step({"tool": "submit", "arguments": {}})
        assert terminated and reward == 0.0 and info["report"]["resolved"] is False
    finally:
        env.close()


def test_minisweagent_on_the_fake(tmp_path):
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    pytest.importorskip("minisweagent")
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.models.test_models import DeterministicModel, make_output

    from sweworld.integrations.minisweagent import SENTINEL, SweworldEnvironment

    fake = backend()
    model = DeterministicModel(outputs=[
        make_output("Look.", [{"command": "cat pkg/value.py"}]),
        make_output("Fix.", [{"command": "echo 'VALUE = 2' > pkg/value.py"}]),
        make_output("Done.", [{"command": f"echo {SENTINEL}"}]),
    ])
    with SweworldEnvironment(task=TASK, backend=fake, submission="diff") as env:
        agent = DefaultAgent(model, env, system_template="Repository at {{workdir}}.",
                             instance_template="{{task}}", step_limit=5, cost_limit=0)
        result = agent.run(TASK.problem_statement)
        assert result["exit_status"] == "Submitted" and agent.n_calls == 3
        assert "VALUE = 1" in agent.messages[3]["content"]
        assert result["submission"] == GOLD
    assert fake.opened[0].closed
    prediction = Prediction(instance_id=TASK.instance_id, model_name_or_path="mini", model_patch=GOLD)
    assert fake.evaluate(TASK, prediction, tmp_path).resolved


def _tree_files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


@pytest.mark.bwrap
def test_a_real_sandbox_passes_the_suite(sandbox):
    assert check_executor(sandbox, workdir_file="README") == [name for name, _ in CHECKS]


class _NoSWT:
    def predict(self, *args, **kwargs):
        raise AssertionError("the conformance suite runs only real utilities: SWT must not be asked")


@pytest.mark.bwrap
def test_a_sim_episode_passes_the_suite(sandbox):
    from sweworld.world.simexec import SimExecutor
    assert check_executor(SimExecutor(sandbox, TASK, _NoSWT()), workdir_file="README") == [n for n, _ in CHECKS]


TOOL_CALLS = [
    ("str_replace_editor", {"command": "view", "path": "/testbed"}),
    ("str_replace_editor", {"command": "view", "path": "/testbed/pkg/__init__.py", "view_range": [2, -1]}),
    ("search", {"search_term": "add"}),
    ("search", {"search_term": "add", "path": "/testbed/tests/test_add.py"}),
    ("search", {"search_term": "nowhere-to-be-found"}),
    ("str_replace_editor", {"command": "str_replace", "path": "/testbed/pkg/__init__.py", "old_str": "a + b",
                            "new_str": "b + a"}),
    ("str_replace_editor", {"command": "create", "path": "/testbed/docs/new.md", "file_text": "new\n"}),
    ("str_replace_editor", {"command": "create", "path": "/testbed/README", "file_text": "x"}),
    ("str_replace_editor", {"command": "view", "path": "/testbed/missing.py"}),
    ("execute_bash", {"command": "cd pkg && ls && cat __init__.py; pwd"}),
    ("execute_bash", {"command": "ls /testbed/nope"}),
]


@pytest.mark.bwrap
def test_tools_see_the_same_on_the_fake_and_a_real_sandbox(sandbox, small_tree):
    fake = FakeExecutor(_tree_files(small_tree[0]))
    real_tools, fake_tools = default_tools(), default_tools()
    for name, args in TOOL_CALLS:
        real, simulated = real_tools.call(sandbox, name, args), fake_tools.call(fake, name, args)
        assert simulated == real, (name, args)
    assert fake.diff() == sandbox.diff()
