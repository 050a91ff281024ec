"""``SWEEnv`` under gymnasium's own checks and wrappers, on the in-memory fake backend (no sandbox, no
network): ``check_env``, ``OrderEnforcing``, ``TimeLimit`` and the episode's end on truncation."""

from __future__ import annotations

import warnings

import pytest
from tests.backends.fake import FakeBackend

from sweworld.core.types import Task
from sweworld.integrations.gym import SWEEnv, register_gym

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

FILES = {"pkg/__init__.py": "", "pkg/value.py": "VALUE = 1\n"}
TASKS = [Task(instance_id=f"tiny__value-{n}", repo="tiny/value", base_commit="0" * 40,
              problem_statement=f"VALUE must be {n}.") for n in (2, 3, 4)]
EDIT = {"tool": "str_replace_editor", "arguments": {"command": "str_replace", "path": "/testbed/pkg/value.py",
                                                    "old_str": "VALUE = 1", "new_str": "VALUE = 2"}}


def fake() -> FakeBackend:
    return FakeBackend({task.instance_id: FILES for task in TASKS})


def checked(env) -> list[str]:
    """The warnings ``check_env(env)`` gives (an ``AssertionError`` when a check fails)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    return [str(w.message) for w in caught]


def test_check_env_passes_on_the_env_gymnasium_make_builds():
    """On the unwrapped env, as gymnasium recommends (the wrapped one: tests/integrations/test_integrations_gym.py)."""
    backend = fake()
    env = SWEEnv.make(TASKS, backend=backend)
    try:
        assert checked(env.unwrapped) == []
    finally:
        env.close()
    assert backend.opened and all(e.closed for e in backend.opened)


def test_the_stack_is_gymnasiums_wrappers():
    env = gymnasium.make(register_gym(), tasks=TASKS, backend=fake())
    try:
        names = []
        layer = env
        while layer is not env.unwrapped:
            names.append(type(layer).__name__)
            layer = layer.env
        assert names == ["EndOnTruncation", "TimeLimit", "OrderEnforcing", "PassiveEnvChecker"]
        assert env.spec.max_episode_steps == 50 and env.spec.order_enforce
        assert isinstance(env.env, gymnasium.wrappers.TimeLimit)
    finally:
        env.close()


def test_seeded_resets_pick_the_task_and_the_turn_goes_on_from_it():
    env = SWEEnv(TASKS, backend=fake())
    try:
        assert env.reset(seed=4)[0] == TASKS[1].problem_statement
        assert env.reset()[0] == TASKS[2].problem_statement
        assert env.reset()[0] == TASKS[0].problem_statement
        assert env.reset(seed=4)[0] == TASKS[1].problem_statement
    finally:
        env.close()


def test_step_before_reset_is_order_enforcings_error():
    env = SWEEnv.make(TASKS, backend=fake())
    try:
        with pytest.raises(gymnasium.error.ResetNeeded):
            env.step({"tool": "submit"})
    finally:
        env.close()


def test_time_limit_truncates_and_ends_the_episode_with_its_patch():
    backend = fake()
    env = SWEEnv.make(TASKS, backend=backend, step_limit=2)
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step(EDIT)
        assert (reward, terminated, truncated) == (0.0, False, False) and "patch" not in info
        _, reward, terminated, truncated, info = env.step({"tool": "execute_bash", "arguments": {"command": "pwd"}})
        assert (reward, terminated, truncated) == (0.0, False, True) and info["steps"] == 2
        assert "+VALUE = 2" in info["patch"] and "report" not in info
        assert env.unwrapped.sandbox is None and backend.opened[-1].closed
        with pytest.raises(RuntimeError, match="reset"):
            env.step({"tool": "submit"})
        env.reset()  # a new episode, a new count
        _, _, _, truncated, info = env.step({"tool": "execute_bash", "arguments": {"command": "pwd"}})
        assert not truncated and info["steps"] == 1
    finally:
        env.close()


def test_a_backend_is_required_to_be_one():
    with pytest.raises(TypeError, match="Backend"):
        SWEEnv(TASKS, backend=object())


def test_a_backend_config_is_built_into_its_backend():
    from sweworld.core.config import SimBackendConfig, WorldModelConfig

    env = SWEEnv(TASKS, backend=SimBackendConfig(world=WorldModelConfig(kind="embedded")))
    try:
        assert env._backend is not None and env._backend.name == "sim"
    finally:
        env.close()
