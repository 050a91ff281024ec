"""SWEEnv end to end on a real instance (more-itertools from PyPI, a real bug, its real tests), over
the real backend; gymnasium's own wrappers for the step limit and the reset-before-step order, and
gymnasium's environment checker on the env."""

from __future__ import annotations

import json
import warnings

import pytest

from realtasks import FIRST_BUG, MODULE, sources
from sweworld.integrations.gym import SWEEnv, parse_action, register_gym

pytestmark = [pytest.mark.bwrap, pytest.mark.network]


@pytest.fixture
def env(task, backend):
    env = SWEEnv([task], backend=backend, eval_timeout=600)
    yield env
    env.close()


def fix_strings(task) -> tuple[str, str]:
    """(old_str, new_str) turning the buggy module into the fixed one: the line of FIRST_BUG."""
    buggy, fixed = sources(task)
    old, new = FIRST_BUG[1], FIRST_BUG[0]
    assert buggy.count(old) == 1 and buggy.replace(old, new) == fixed
    return old, new


def test_view_fix_submit_resolves(env, task):
    obs, info = env.reset(options={"task": task})
    assert obs == task.problem_statement
    assert info["instance_id"] == task.instance_id and info["workdir"] == "/testbed"
    assert {t["function"]["name"] for t in info["tools"]} >= {"execute_bash", "str_replace_editor", "submit"}
    path = f"{info['workdir']}/{MODULE}"
    obs, reward, terminated, truncated, info = env.step(
        {"tool": "str_replace_editor", "arguments": {"command": "view", "path": path, "view_range": [1, 40]}})
    assert not info["format_error"] and (reward, terminated, truncated) == (0.0, False, False)
    assert info["steps"] == 1 and "exit_code" in info
    old, new = fix_strings(task)
    obs, reward, terminated, truncated, info = env.step(
        {"name": "str_replace_editor",
         "arguments": {"command": "str_replace", "path": path, "old_str": old, "new_str": new}})
    assert not info["format_error"], obs
    assert reward == 0.0 and not terminated
    obs, reward, terminated, truncated, info = env.step(
        {"id": "call_1", "type": "function", "function": {"name": "submit", "arguments": "{}"}})
    assert terminated and not truncated and reward == 1.0
    assert info["report"]["resolved"] is True and info["report"]["instance_id"] == task.instance_id
    assert "+    if default is _marker:" in info["patch"] and "-    if default is not _marker:" in info["patch"]
    with pytest.raises(RuntimeError):
        env.step({"tool": "execute_bash", "arguments": {"command": "true"}})


def test_submit_at_once_is_not_rewarded(env, task):
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step({"tool": "finish", "arguments": {}})
    assert terminated and not truncated and reward == 0.0
    assert info["patch"] == "" and info["report"]["resolved"] is False


def test_step_limit_truncates(task, backend):
    gymnasium = pytest.importorskip("gymnasium")
    env = SWEEnv.make([task], backend=backend, step_limit=2)
    assert isinstance(env.env, gymnasium.wrappers.TimeLimit) and env.spec.max_episode_steps == 2
    try:
        env.reset(seed=3)
        obs, reward, terminated, truncated, info = env.step(
            {"tool": "execute_bash", "arguments": {"command": "echo one"}})
        assert "one" in obs and info["exit_code"] == 0 and not truncated and not terminated
        obs, reward, terminated, truncated, info = env.step(
            json.dumps({"tool": "execute_bash", "arguments": {"command": "echo two > new.txt"}}))
        assert truncated and not terminated and reward == 0.0 and info["steps"] == 2
        assert "new.txt" in info["patch"] and "report" not in info
        with pytest.raises(RuntimeError):
            env.step({"tool": "execute_bash", "arguments": {"command": "true"}})
    finally:
        env.close()


def test_reset_gives_a_clean_workspace(env, task):
    env.reset(options={"task": task.instance_id})
    _, _, _, _, info = env.step({"tool": "execute_bash",
                                 "arguments": {"command": f"echo '# edited' >> {MODULE} && cd /tmp"}})
    assert info["exit_code"] == 0 and "# edited" in env.sandbox.diff()
    env.reset(options={"task": task})
    obs, _, _, _, info = env.step({"tool": "execute_bash", "arguments": {"command": f"pwd; git status --porcelain; tail -1 {MODULE}"}})
    assert info["exit_code"] == 0 and "# edited" not in obs and obs.startswith("/testbed")
    assert env.sandbox.diff() == ""


def test_format_errors_are_steps(env):
    env.reset()
    for action in ({"arguments": {}}, "not json", ["execute_bash"],
                   {"tool": "no_such_tool", "arguments": {}},
                   {"function": {"name": "execute_bash", "arguments": "{bad"}}):
        obs, _, terminated, _, info = env.step(action)
        assert info["format_error"] and obs.startswith("ERROR") and not terminated, action
    assert info["steps"] == 5
    assert parse_action({"function": {"name": "submit", "arguments": "{}"}}) == ("submit", "{}", "")


def test_reset_needs_a_task(backend):
    env = SWEEnv(backend=backend)
    with pytest.raises(ValueError, match="no task"):
        env.reset()
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"tool": "submit"})
    env.close()


def test_step_before_reset_is_gymnasiums_order_error(task, backend):
    gymnasium = pytest.importorskip("gymnasium")
    env = SWEEnv.make([task], backend=backend)
    try:
        with pytest.raises(gymnasium.error.ResetNeeded):
            env.step({"tool": "submit"})
    finally:
        env.close()


def test_gymnasium_make(task, backend):
    gymnasium = pytest.importorskip("gymnasium")
    env_id = register_gym()
    assert register_gym() == env_id == "sweworld/SWE-v0"
    env = gymnasium.make(env_id, tasks=[task], backend=backend, max_episode_steps=5)
    try:
        assert isinstance(env.unwrapped, SWEEnv) and isinstance(env.unwrapped, gymnasium.Env)
        obs, info = env.reset(seed=0)
        assert obs == task.problem_statement and env.observation_space.contains(obs)
        assert info["instance_id"] == task.instance_id
        action = json.dumps({"tool": "execute_bash", "arguments": {"command": "echo héllo"}})
        assert env.action_space.contains(action)
        obs, reward, _, _, _ = env.step(action)
        assert "héllo" in obs and env.observation_space.contains(obs) and reward == 0.0
    finally:
        env.close()


def test_gymnasiums_env_checker_passes_on_the_wrapped_env(task, backend):
    """``check_env`` on real episodes, on the env as ``SWEEnv.make`` gives it: the only warning is that
    it is wrapped (the unwrapped one, warning-free: test_integrations_gym_checker.py)."""
    pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env
    env = SWEEnv.make([task], backend=backend)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env)
        messages = [str(w.message) for w in caught]
        assert len(messages) == 1 and "is different from the unwrapped version" in messages[0], messages
    finally:
        env.close()
