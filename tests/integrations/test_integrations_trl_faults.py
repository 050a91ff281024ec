"""TRL's ``environment_factory`` when things go wrong: a trainer killed mid-step, a tool call that kills
its sandbox, the same patch graded twice, and no episode left open after ``get_reward``.

Real episodes of the more-itertools instance (``conftest.task``) whose gold fix is ``FIRST_BUG``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra_failure import DIE, dies_on_marker
from realtasks import FIRST_BUG, MODULE
from sweworld.core.errors import SandboxError
from sweworld.integrations import trl as sw
from sweworld.sandbox import workdirs
from sweworld.tasks import save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow]

MARKER = "sweworld-in-step"
KILLED = f"""
import sys
from sweworld.integrations import trl as sw
env = sw.environment_factory(sys.argv[1], instance_ids=[sys.argv[2]])()
env.reset(instance_id=sys.argv[2])
env.execute_bash("touch /tmp/{MARKER} && sleep 300")
"""


def owned_by(pid: int) -> set[Path]:
    """The episode directories whose ``owner.json`` names ``pid``."""
    return {d for d in workdirs.root().iterdir()
            if d.is_dir() and (workdirs.read_owner(d) or {}).get("pid") == pid}


def processes() -> dict[int, tuple[int, str, str, str]]:
    """pid -> (parent pid, start time, command line, working directory) of every process. A sandbox's
    bubblewrap names no host path on its command line (its arguments come from a memfd); its working
    directory is its episode's directory."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            found[int(entry)] = (int(fields[1]), fields[19], cmdline, cwd)
    return found


def below(pid: int) -> dict[int, tuple[int, str, str, str]]:
    """The processes below ``pid``."""
    table, found, frontier = processes(), {}, {pid}
    while frontier:
        children = {p: row for p, row in table.items() if row[0] in frontier}
        found.update(children)
        frontier = set(children)
    return found


def survivors(recorded: dict[int, tuple[int, str, str, str]], episode: Path) -> list[str]:
    """Of ``recorded`` (same pid and start time), and of processes in or naming ``episode``, those alive."""
    table = processes()
    return [row[2] for pid, row in table.items()
            if (pid in recorded and recorded[pid][1] == row[1]) or str(episode) in row[2] or row[3] == str(episode)]


def _with_sleep(processes: dict) -> dict | None:
    """``processes`` once one of them is the step's ``sleep 300``, else None."""
    return processes if any("sleep 300" in row[2] for row in processes.values()) else None


def wait_for(check, what: str, proc: subprocess.Popen | None = None, limit: float = 300.0):
    """Poll ``check`` until it returns something true (a hang fails the test instead of blocking it)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the trainer process exited ({proc.returncode}) before {what}")
        time.sleep(0.1)
    pytest.fail(f"gave up waiting for {what}")


def fix(env: sw.SWEWorldEnv) -> str:
    """The task's gold fix, through the model's editor tool."""
    bad, good = FIRST_BUG[1], FIRST_BUG[0]
    return env.str_replace_editor("str_replace", f"/testbed/{MODULE}", old_str=bad, new_str=good)


@pytest.fixture(scope="module")
def factory(task, backend, tmp_path_factory):
    return sw.environment_factory([task], backend=backend, log_dir=tmp_path_factory.mktemp("trl-logs"))


def test_a_trainer_killed_mid_step_leaves_what_env_gc_removes(task, tmp_path):
    dataset = save_tasks([task], tmp_path / "data.jsonl")
    with (tmp_path / "stderr").open("w") as stderr:
        trainer = subprocess.Popen([sys.executable, "-c", KILLED, str(dataset), task.instance_id],
                                   stdout=subprocess.DEVNULL, stderr=stderr, env=os.environ)
    try:
        episode = wait_for(lambda: next((d for d in owned_by(trainer.pid) if (d / "tmp" / MARKER).exists()), None),
                           "the trainer's tool call", trainer)
        # the marker is touched just before the step's sleep starts: wait for the sleep too
        held = wait_for(lambda: _with_sleep(below(trainer.pid)), "the step's sleep", trainer, limit=60)
        assert any("sleep 300" in row[2] for row in held.values()), held  # killed inside the step
        assert any("bwrap" in row[2] and row[3] == str(episode) for row in held.values()), held
    finally:
        trainer.kill()
        trainer.wait()
    assert trainer.returncode == -signal.SIGKILL
    assert episode.is_dir()  # nobody closed it: what gc is for

    gc = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "env", "gc"], env=os.environ,
                        capture_output=True, text=True)
    assert gc.returncode == 0, gc.stderr
    assert f"removed episode {episode} (owner pid {trainer.pid} is gone)" in gc.stdout, gc.stdout
    assert not episode.exists()
    wait_for(lambda: not survivors(held, episode), "the killed trainer's sandbox processes to end", limit=60)
    assert survivors(held, episode) == []


def test_a_tool_call_that_kills_its_sandbox_raises_scores_zero_and_the_batch_goes_on(task, factory):
    before = owned_by(os.getpid())
    env = factory()
    env.reset(instance_id=task.instance_id)
    (episode,) = owned_by(os.getpid()) - before
    assert "hi" in env.execute_bash("echo hi")
    # every other process of the episode dies, its server does not (the pid namespace's first process)
    assert "survived" in env.execute_bash("sleep 100 & kill -9 -1; echo survived")
    assert "hi" in env.execute_bash("echo hi")
    with dies_on_marker(), pytest.raises(SandboxError, match="sandbox died"):
        env.execute_bash(DIE)
    assert not episode.exists()  # the failed episode is closed at once
    assert env.get_reward() == 0.0
    assert env.result.error.startswith("execute_bash: SandboxError: ") and env.result.resolved is None
    with pytest.raises(RuntimeError, match="the episode failed: execute_bash: SandboxError"):
        env.execute_bash("echo after")

    other = factory()
    other.reset(instance_id=task.instance_id)
    assert "has been edited" in fix(other)
    assert other.get_reward() == 1.0
    assert other.result.error is None and other.result.resolved is True
    assert env.result in factory.results and other.result in factory.results


def test_the_same_patch_gets_the_same_real_verdict_and_the_empty_patch_zero(task, factory):
    rollouts = []
    for _ in range(2):
        env = factory()
        env.reset(instance_id=task.instance_id)
        fix(env)
        rollouts.append((env.get_reward(), env.result))
    (first, a), (second, b) = rollouts
    assert first == second == 1.0
    assert a.patch == b.patch and a.patch.startswith("diff --git a/more_itertools/more.py")

    empty = factory()
    empty.reset(instance_id=task.instance_id)
    empty.execute_bash("ls")
    assert empty.get_reward() == 0.0
    assert empty.result.patch == "" and empty.result.error is None and empty.result.resolved is False


def test_the_same_patch_gets_exactly_the_same_swr_probability(task, tmp_path):
    factory = sw.environment_factory([task], backend="sim", log_dir=tmp_path)
    rewards, patches = [], []
    for _ in range(2):
        env = factory()
        env.reset(instance_id=task.instance_id)
        assert "has been edited" in fix(env)
        rewards.append(env.get_reward())
        patches.append(env.result.patch)
        assert env.result.backend == "sim" and env.result.error is None
    assert patches[0] == patches[1] != ""
    assert rewards[0] == rewards[1]  # exactly: the same float
    assert isinstance(rewards[0], float) and 0.0 < rewards[0] <= 1.0


@pytest.mark.parametrize("ending", ["get_reward", "submit", "reset"])
def test_no_episode_stays_open(task, factory, ending):
    before = owned_by(os.getpid())
    env = factory()
    env.reset(instance_id=task.instance_id)
    (episode,) = owned_by(os.getpid()) - before
    fix(env)
    assert episode.is_dir()
    if ending == "submit":
        env.submit()
        assert not episode.exists()  # closed by submit, graded from the patch it left
    if ending == "reset":  # the next batch reuses the environment without grading this rollout
        env.reset(instance_id=task.instance_id)
        assert not episode.exists()
        (episode,) = owned_by(os.getpid()) - before
        fix(env)
    assert env.get_reward() == 1.0
    assert not episode.exists()
    assert owned_by(os.getpid()) == before
    assert not [row for row in processes().values() if str(episode) in row[2] or row[3] == str(episode)]
    assert env.result.submitted is (ending == "submit")


def test_a_sandbox_that_dies_between_calls_scores_zero_and_is_closed(task, factory):
    before = owned_by(os.getpid())
    env = factory()
    env.reset(instance_id=task.instance_id)
    (episode,) = owned_by(os.getpid()) - before
    fix(env)
    for pid, row in processes().items():  # killed from outside (the OOM killer, an operator)
        if "bwrap" in row[2] and row[3] == str(episode):
            os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not [row for row in processes().values() if row[3] == str(episode)], "the sandbox to die", limit=60)
    try:
        assert env.get_reward() == 0.0
        assert env.result.error and "SandboxError" in env.result.error
        assert not episode.exists()
    finally:
        env.reset(instance_id=task.instance_id)  # what closes it today
        env.get_reward()
