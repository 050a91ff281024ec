"""``SWEEnv``'s snapshot, fork and restore (issue 45) on real episodes of a real instance
(more-itertools from PyPI, its real bug and tests): a fork is wrapped as ``gymnasium.make`` wraps the
parent and its ``TimeLimit`` counts on; the parent never sees the fork's writes; restore puts back the
files, the shell, the step counts and the tools' state; an episode that cannot branch says why."""

from __future__ import annotations

import pytest

from realtasks import FIRST_BUG, MODULE
from sweworld.core.errors import ConfigError, SnapshotError
from sweworld.integrations.gym import SWEEnv

gymnasium = pytest.importorskip("gymnasium")


def real(test):
    """A test that opens real episodes: bubblewrap, and PyPI for the instance's first build."""
    return pytest.mark.network(pytest.mark.bwrap(test))


def bash(env, command: str):
    return env.step({"tool": "execute_bash", "arguments": {"command": command}})


def edit(path: str, old: str, new: str) -> dict:
    return {"tool": "str_replace_editor",
            "arguments": {"command": "str_replace", "path": path, "old_str": old, "new_str": new}}


FIX = edit(f"/testbed/{MODULE}", FIRST_BUG[1], FIRST_BUG[0])
STATE = ("pwd; echo \"mark=$MARK\"; cat /testbed/note.txt; "
         "for f in child later; do [ -e /testbed/$f.txt ] && echo has-$f || echo no-$f; done")


@pytest.fixture
def env(task, backend):
    env = SWEEnv.make([task], backend=backend, step_limit=4, eval_timeout=600)
    env.reset(seed=0)
    yield env
    env.close()


@real
def test_a_fork_is_wrapped_like_its_parent_and_counts_on(env):
    bash(env, "echo one > /testbed/note.txt && export MARK=one && cd /tmp")
    child = env.unwrapped.fork()
    try:
        assert isinstance(child, type(env)) and isinstance(child.env, gymnasium.wrappers.TimeLimit)
        assert child.env._elapsed_steps == env.env._elapsed_steps == 1 and child.unwrapped.steps == 1
        assert child.unwrapped.observation == env.unwrapped.observation and child.unwrapped.task == env.unwrapped.task
        assert child.unwrapped.sandbox is not env.unwrapped.sandbox
        seen, _, _, truncated, info = bash(child, STATE)
        assert seen.startswith("/tmp\nmark=one\none\n") and not truncated and info["steps"] == 2
        _, _, terminated, truncated, info = child.step(FIX)  # the fork's own write
        assert not info["format_error"] and not terminated and not truncated
        parent, *_ = bash(env, f"{STATE}; git -C /testbed status --porcelain")
        assert parent.startswith("/tmp\nmark=one\none\n") and MODULE not in parent, parent
        assert env.unwrapped.sandbox.diff().count("diff --git") == 1  # note.txt alone
        _, _, terminated, truncated, info = bash(child, "true")  # the 4th step: the parent's limit, counted on
        assert truncated and not terminated and "+    if default is _marker:" in info["patch"]
        with pytest.raises(RuntimeError, match="reset"):
            bash(child, "true")
        assert env.env._elapsed_steps == 2 and not bash(env, "true")[3]  # the parent goes on, apart
    finally:
        child.close()


@real
def test_restore_puts_back_files_shell_counts_and_tools(env):
    bash(env, "echo one > /testbed/note.txt && export MARK=one && cd /tmp")
    snapshot = env.unwrapped.snapshot()
    assert snapshot.steps == 1
    assert not env.step(FIX)[4]["format_error"]  # an edit the editor can undo
    bash(env, "echo two > /testbed/note.txt && touch /testbed/later.txt && rm /testbed/note.txt && export MARK=two")
    assert env.env._elapsed_steps == 3
    observation, info = env.unwrapped.restore(snapshot)
    assert observation == snapshot.observation and info["steps"] == 1 and env.unwrapped.steps == 1
    assert env.env._elapsed_steps == 1  # TimeLimit's count is the snapshot's too
    seen, *_ = bash(env, STATE)
    assert seen.startswith("/tmp\nmark=one\none\n") and "no-later" in seen, seen
    assert env.unwrapped.sandbox.diff().count("diff --git") == 1
    undo = env.step({"tool": "str_replace_editor", "arguments": {"command": "undo_edit", "path": f"/testbed/{MODULE}"}})
    assert "No edit history found" in undo[0], undo[0]  # the undo history is the snapshot's: empty
    _, _, _, truncated, info = bash(env, "true")
    assert truncated and info["steps"] == 4
    env.unwrapped.release(snapshot)  # the episode ended: nothing left to free, no error


@real
def test_a_fork_of_a_snapshot_after_the_parent_moved_on(env):
    bash(env, "echo one > /testbed/note.txt")
    snapshot = env.unwrapped.snapshot()
    bash(env, "echo two > /testbed/note.txt && touch /testbed/later.txt")
    child = env.unwrapped.fork(snapshot)
    try:
        assert child.env._elapsed_steps == 1 and child.unwrapped.steps == 1
        seen, *_ = bash(child, f"{STATE}; touch /testbed/child.txt")
        assert "\none\n" in seen and "no-later" in seen, seen
        with pytest.raises(SnapshotError, match="only its own"):  # a fork restores its own snapshots only
            child.unwrapped.restore(snapshot)
        own = child.unwrapped.snapshot()
        bash(child, "rm /testbed/child.txt")
        child.unwrapped.restore(own)
        assert "has-child" in bash(child, STATE)[0]
        parent, *_ = bash(env, STATE)
        assert "\ntwo\n" in parent and "no-child" in parent, parent
        env.unwrapped.release(snapshot)
        with pytest.raises(SnapshotError, match="was released"):
            env.unwrapped.restore(snapshot)
    finally:
        child.close()


@real
def test_a_fork_submits_and_is_graded_while_the_parent_goes_on(task, backend):
    env = SWEEnv([task], backend=backend, eval_timeout=600)
    try:
        env.reset(seed=0)
        snapshot = env.snapshot()
        child = env.fork(snapshot)  # a bare env forks bare
        assert isinstance(child, SWEEnv)
        try:
            assert not child.step(FIX)[4]["format_error"]
            _, reward, terminated, _, info = child.step({"tool": "submit", "arguments": {}})
            assert terminated and reward == 1.0 and info["report"]["resolved"] is True
        finally:
            child.close()
        assert env.sandbox is not None and env.sandbox.diff() == ""
        _, reward, terminated, _, info = env.step({"tool": "submit", "arguments": {}})
        assert terminated and reward == 0.0 and info["report"]["resolved"] is False
        with pytest.raises(RuntimeError, match="fork before the episode ends"):
            env.restore(snapshot)
    finally:
        env.close()


def test_an_episode_that_cannot_branch_says_why():
    from tests.backends.fake import FakeBackend
    from tests.integrations.test_integrations_gym_checker import FILES, TASKS
    env = SWEEnv.make(TASKS, backend=FakeBackend({t.instance_id: FILES for t in TASKS}))
    try:
        with pytest.raises(RuntimeError, match="call reset"):
            env.unwrapped.snapshot()
        env.reset(seed=0)
        for call in (env.unwrapped.snapshot, env.unwrapped.fork):
            with pytest.raises(ConfigError, match="FakeExecutor has no snapshot/fork/restore") as refused:
                call()
            assert "real, sim or hybrid backend" in str(refused.value)
        with pytest.raises(TypeError, match=r"EnvSnapshot of SWEEnv\.snapshot"):
            env.unwrapped.restore("not a snapshot")
    finally:
        env.close()
