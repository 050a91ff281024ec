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
