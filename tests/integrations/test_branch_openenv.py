"""Snapshot, fork and restore through sweworld's OpenEnv server (issue 45), with OpenEnv's own client
(``GenericEnvClient``, WebSocket on 127.0.0.1) on real episodes of a real instance, and on the sim
backend: a ``snapshot`` action, ``reset(from_snapshot=...)`` and ``reset(fork_of=...)`` in another
session, ``restore`` and ``release`` actions, and the errors for ids that are not (or no longer) there."""

from __future__ import annotations

import pytest

pytest.importorskip("openenv")

from tests.integrations.conftest import BRANCH_STATE
from tests.integrations.test_integrations_openenv import bash, real, serving, session

from realtasks import FIRST_BUG, MODULE
from sweworld.integrations.episodes import EpisodeSpec
from sweworld.integrations.openenv import OpenEnvServer
from sweworld.integrations.openenv_models import SWEAction


@pytest.fixture(scope="module")
def served(dataset, backend):
    server = OpenEnvServer(EpisodeSpec(dataset=dataset), backend=backend, max_sessions=3, step_limit=6)
    with serving(server) as url:
        yield server, url


def snapshot(client) -> str:
    taken = client.step({"branch": "snapshot"})
    assert taken.reward is None and not taken.done and taken.observation["error"] is None, taken
    return taken.observation["snapshot_id"]


@real
def test_a_snapshot_forks_into_another_session_and_restores_its_own(served, task):
    server, url = served
    with session(url, server) as parent, session(url) as child:
        parent.reset(instance_id=task.instance_id, episode_id="parent")
        bash(parent, "echo one > /testbed/note.txt && export MARK=one && cd /tmp")
        snap = snapshot(parent)
        assert parent.state()["step_count"] == 1  # a snapshot is no step
        bash(parent, "echo two > /testbed/note.txt && touch /testbed/later.txt && export MARK=two")
        forked = child.reset(from_snapshot=snap, episode_id="child")
        obs = forked.observation
        assert obs["output"] == task.problem_statement and obs["step"] == 1 and obs["workdir"] == "/testbed"
        assert child.state() == {"episode_id": "child", "step_count": 1, "instance_id": task.instance_id,
                                 "backend": "real", "done": False}
        seen = bash(child, f"{BRANCH_STATE}; touch /testbed/child.txt").observation["output"]
        assert seen.startswith("/tmp\nmark=one\none\nno-child\nno-later\n"), seen
        mine = bash(parent, BRANCH_STATE).observation["output"]
        assert mine.startswith("/tmp\nmark=two\ntwo\nno-child\nhas-later\n"), mine  # the child's write is its own
        not_mine = child.step({"branch": "restore", "snapshot_id": snap}).observation
        assert "another session's" in not_mine["error"]
        back = parent.step({"branch": "restore", "snapshot_id": snap})
        assert back.observation["snapshot_id"] == snap and not back.done and parent.state()["step_count"] == 1
        assert bash(parent, BRANCH_STATE).observation["output"].startswith("/tmp\nmark=one\none\nno-child\nno-later\n")
        assert parent.step({"branch": "release", "snapshot_id": snap}).observation["error"] is None
        gone = parent.step({"branch": "restore", "snapshot_id": snap}).observation["error"]
        assert f"no snapshot {snap!r}" in gone
        with pytest.raises(RuntimeError, match="no snapshot"):
            child.reset(from_snapshot=snap)
        assert bash(child, "ls /testbed/child.txt").observation["exit_code"] == 0  # the failed reset changed nothing


@real
def test_fork_of_a_live_episode_and_snapshots_end_with_their_session(served, task):
    server, url = served
    with session(url, server) as other:
        with session(url) as parent:
            parent.reset(instance_id=task.instance_id, episode_id="live-parent")
            fixed = parent.step({"tool": "str_replace_editor", "arguments": {
                "command": "str_replace", "path": f"/testbed/{MODULE}", "old_str": FIRST_BUG[1],
                "new_str": FIRST_BUG[0]}})
            assert fixed.observation["error"] is None
            snap = snapshot(parent)
            other.reset(fork_of="live-parent")
            assert other.state()["step_count"] == 1
            done = other.step({"tool": "submit", "arguments": {}})  # the fork is graded on its own
            assert done.done and done.reward == 1.0 and "+    if default is _marker:" in done.observation["patch"]
            assert bash(parent, "git -C /testbed diff --stat").observation["output"].count(MODULE) == 1
        assert server.wait_closed(600)  # the parent's session ended: its episode and snapshots with it
        with pytest.raises(RuntimeError, match="no snapshot"):
            other.reset(from_snapshot=snap)
        with pytest.raises(RuntimeError, match="no session has a live episode 'live-parent'"):
            other.reset(fork_of="live-parent")
        with pytest.raises(RuntimeError, match="a fork's task is its parent's"):
            other.reset(from_snapshot=snap, instance_id=task.instance_id)
        assert other.step({"branch": "snapshot"}).observation["error"].startswith("no open episode")
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):  # a restore names its snapshot
            other.step({"branch": "restore"})


@real
def test_the_sim_backend_forks_its_workspace(dataset, task):
    server = OpenEnvServer({"dataset": dataset, "backend": "sim"})
    with serving(server) as url, session(url, server) as parent, session(url) as child:
        parent.reset(instance_id=task.instance_id)
        made = parent.step({"tool": "str_replace_editor", "arguments": {
            "command": "create", "path": "/testbed/sim_note.txt", "file_text": "from the parent\n"}})
        assert made.observation["error"] is None, made
        snap = snapshot(parent)
        child.reset(from_snapshot=snap)
        assert child.state()["backend"] == "sim" and child.state()["step_count"] == 1
        edited = child.step({"tool": "str_replace_editor", "arguments": {  # refused unless the file is there
            "command": "str_replace", "path": "/testbed/sim_note.txt", "old_str": "from the parent",
            "new_str": "from the child"}})
        assert edited.observation["error"] is None, edited
        again = parent.step({"tool": "str_replace_editor", "arguments": {
            "command": "str_replace", "path": "/testbed/sim_note.txt", "old_str": "from the parent",
            "new_str": "still the parent's"}})
        assert again.observation["error"] is None, again  # the child's edit is not the parent's


def test_branch_actions_are_validated():
    assert SWEAction.model_validate({"branch": "snapshot"}).tool == ""
    assert SWEAction.model_validate({"branch": "release", "snapshot_id": "x"}).snapshot_id == "x"
    for wrong in ({"branch": "restore"}, {"branch": "snapshot", "tool": "execute_bash"}, {}, {"branch": "undo"}):
        with pytest.raises(ValueError):
            SWEAction.model_validate(wrong)
