"""The worked example: ``SWEWorldTextEnv`` driven the way SkyRL's generator drives a text environment
(``init(prompt)``, then the model's text to ``step`` turn after turn, the observations appended to
the conversation, until ``done``), the model being a scripted policy whose tool calls are written as
text actions.

Real episodes of the demo's instances (their environments are normally in the test cache); the sim
backend runs the embedded world (CPU models, no endpoint).
"""

from __future__ import annotations

import pytest

from raycluster import demo_tasks
from sweworld.agents.actions import render_text_action
from sweworld.agents.policies import NoopPolicy, OraclePolicy
from sweworld.backends import make_backend
from sweworld.backends.real import RealBackend
from sweworld.rl import SWEWorldTextEnv
from sweworld.world.config import WorldConfig

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow]

@pytest.fixture(scope="module")
def task():
    return demo_tasks()[0]


class ScriptedModel:
    """A scripted policy speaking text: each reply is its next tool call as a text action."""

    def __init__(self, policy, task, prefix: list[str] | None = None):
        self.policy, self.prefix = policy, list(prefix or [])
        policy.reset(task)

    def generate(self, conversation: list[dict]) -> str:
        if self.prefix:
            return self.prefix.pop(0)
        call = self.policy.act(conversation, None).tool_calls[0]
        return render_text_action(call.name, call.arguments, "next step")


def agent_loop(env: SWEWorldTextEnv, model: ScriptedModel) -> tuple[list[dict], dict, int]:
    """SkyRL's generator loop over one environment: (conversation, last step output, turns)."""
    conversation, _ = env.init([])
    turns = 0
    while True:
        action = model.generate(conversation)
        conversation.append({"role": "assistant", "content": action})
        output = env.step(action)
        turns += 1
        conversation += output["observations"]
        if output["done"]:
            return conversation, output, turns


def test_the_oracle_resolves_the_task_through_text_actions(task):
    env = SWEWorldTextEnv({"backend": RealBackend()}, {"task": task.model_dump(), "max_turns": 20})
    try:
        conversation, last, turns = agent_loop(env, ScriptedModel(OraclePolicy(), task))
    finally:
        env.close()
    assert last["reward"] == 1.0 and last["observations"] == []
    assert last["metadata"]["backend"] == "real" and last["metadata"]["report"]["resolved"] is True
    assert last["metadata"]["patch"].startswith("diff --git")
    assert turns == len(OraclePolicy().actions(task)) + 1  # the edits, then submit
    assert conversation[0]["role"] == "system" and "<function=" in conversation[0]["content"]
    assert conversation[1] == {"role": "user", "content": task.problem_statement}


def test_a_reply_without_action_is_a_format_error_and_the_turn_limit_ends_the_episode(task):
    env = SWEWorldTextEnv({"backend": RealBackend()}, {"task": task, "max_turns": 2})
    try:
        conversation, last, turns = agent_loop(env, ScriptedModel(OraclePolicy(), task, prefix=["I will think."]))
    finally:
        env.close()
    assert "Format error" in conversation[3]["content"] and "<function=" in conversation[3]["content"]
    assert turns == 2 and last["done"] and last["reward"] == 0.0
    assert "report" not in last["metadata"] and last["metadata"]["patch"] == ""  # truncated after a view


def test_the_sim_backend_rewards_swr_probability(task):
    sim = make_backend("sim", world=WorldConfig.from_options(urls=None, kind="embedded", dataset="demo"))
    env = SWEWorldTextEnv({"backend": sim}, {"task": task})
    try:
        _, resolved, _ = agent_loop(env, ScriptedModel(OraclePolicy(), task))
        _, nothing, turns = agent_loop(env, ScriptedModel(NoopPolicy(), task))  # a second episode, same env
    finally:
        env.close()
    assert resolved["metadata"]["backend"] == "sim"
    assert resolved["reward"] == resolved["metadata"]["report"]["sim_probability"] and 0.5 < resolved["reward"] < 1
    assert turns == 1 and nothing["reward"] == 0.0


def test_extras_must_name_the_task():
    with pytest.raises(ValueError, match=r"extras\['task'\]"):
        SWEWorldTextEnv({"backend": RealBackend()}, {})


@pytest.fixture(scope="module")
def registered():
    skyrl_gym = pytest.importorskip("skyrl_gym")
    if "sweworld" not in skyrl_gym.registry:
        skyrl_gym.register(id="sweworld", entry_point="sweworld.rl.skyrl:SWEWorldTextEnv")
    return skyrl_gym


@pytest.mark.parametrize("kind", ["real", "sim", "hybrid"])
def test_skyrl_gyms_own_make_builds_each_backend(registered, task, kind):
    """``skyrl_gym.make`` of the real package, as a SkyRL user registers and makes it: the three
    backends by name (sim and hybrid on the embedded world: no endpoint, no options), SkyRL's
    OmegaConf env_config, one tool call through ``step``."""
    from omegaconf import OmegaConf
    from skyrl_gym.envs.base_text_env import BaseTextEnv
    env = registered.make("sweworld", env_config=OmegaConf.create({"backend": kind}), extras={"task": task.model_dump()})
    try:
        assert isinstance(env, BaseTextEnv) and env.backend.name == kind
        conversation, info = env.init([])
        assert info["instance_id"] == task.instance_id and conversation[1]["content"] == task.problem_statement
        output = env.step(render_text_action("execute_bash", {"command": "ls"}, "look"))
        assert not output["done"] and output["metadata"]["backend"] == kind
        assert "more_itertools" in output["observations"][0]["content"]  # the listing: navigation runs for real
    finally:
        env.close()


def test_wrong_backend_options_are_one_config_error(registered, task):
    from sweworld.core.errors import ConfigError
    with pytest.raises(ConfigError, match=r"world\.urlz"):
        registered.make("sweworld", env_config={"backend": "sim", "backend_options": {"world": {"urlz": []}}},
                        extras={"task": task.model_dump()})
