"""One SWE task as a SkyRL-gym text environment (``skyrl_gym.envs.base_text_env.BaseTextEnv``).

SkyRL's generator builds an environment per sample from the environment config and the dataset
row's extras, calls ``init(prompt)`` for the first conversation, then, turn by turn, feeds the
model's text to ``step(action)`` and appends the returned ``observations`` to the conversation
until ``done``; ``reward`` is the sample's reward. Here:

- ``env_config``: ``backend`` (a ``Backend``, or ``real``, ``sim`` or ``hybrid``: sim and hybrid with
  the embedded world unless ``backend_options`` says otherwise), ``backend_options`` (the rest of
  ``sweworld.core.config.BackendConfig``: ``world``, ``audit_rate``...), ``repos_dir``, ``step_limit``; a
  plain dict or SkyRL's OmegaConf ``DictConfig``; wrong options are one ``ConfigError``;
- ``extras``: ``task`` (a ``Task`` or its row) and optionally ``max_turns``;
- an action is the model's text with one ``<function=NAME><parameter=...>...</function>`` block
  (``agents.actions``, the agent loop's text format) run as one tool call of ``SWEEnv``;
- ``done`` on ``submit`` (reward: ``seam.grade``'s, as ``SWEEnv`` gives it, P(resolved) with the sim
  backend) or at the turn limit (reward 0.0, the patch in ``metadata``).

``skyrl_gym`` is optional (extra ``skyrl``): with it the class subclasses ``BaseTextEnv``. What a
SkyRL user writes::

    import skyrl_gym
    skyrl_gym.register(id="sweworld", entry_point="sweworld.rl.skyrl:SWEWorldTextEnv")
    env = skyrl_gym.make("sweworld", env_config={"backend": "sim"}, extras={"task": row})
"""

from __future__ import annotations

from typing import Any

from sweworld.agents.actions import format_error_message, parse_text_action
from sweworld.backends import Backend
from sweworld.core.types import Task
from sweworld.integrations.episodes import plain_config, resolve_backend
from sweworld.integrations.gym import SWEEnv
from sweworld.seam import prompt as prompts

try:  # optional: the class works the same without SkyRL
    from skyrl_gym.envs.base_text_env import BaseTextEnv as _Base
except ImportError:
    _Base = object


def _backend(config: dict[str, Any]) -> Backend:
    """The backend ``config`` names (``integrations.episodes.resolve_backend``)."""
    return resolve_backend(config.get("backend", "real"), backend_options=config.get("backend_options"),
                           repos_dir=config.get("repos_dir"), where="skyrl env_config")


class SWEWorldTextEnv(_Base):  # type: ignore[misc,valid-type]
    """See the module docstring."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        if _Base is not object:
            super().__init__()
        config = dict(plain_config(env_config) or {})
        extras = dict(extras or {})
        if "task" not in extras:
            raise ValueError("SWEWorldTextEnv needs extras['task'] (a Task or a SWE-bench row)")
        task = extras["task"]
        self.task = task if isinstance(task, Task) else Task.model_validate(task)
        self.backend = _backend(config)
        self.max_turns = int(extras.get("max_turns", config.get("step_limit", 50)))
        self.turns = 0
        self.env = SWEEnv.make([self.task], backend=self.backend, step_limit=self.max_turns)

    def init(self, prompt: list[dict[str, str]] | None = None) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Open the task's episode; the first conversation is ``prompt`` when the dataset gave one, else
        the tools' instructions and the problem statement."""
        _, info = self.env.reset(options={"task": self.task})
        self.turns = 0
        conversation = list(prompt or []) or prompts.messages(self.task, "tools", schemas=info["tools"])
        return conversation, {"instance_id": self.task.instance_id, "workdir": info["workdir"]}

    def step(self, action: str) -> dict[str, Any]:
        """One turn: the model's text -> one tool call -> the observation (SkyRL's step output)."""
        self.turns += 1
        parsed = parse_text_action(action)
        call = {"tool": parsed.name, "arguments": parsed.arguments} if parsed else "not an action"
        observation, reward, terminated, truncated, info = self.env.step(call)
        if parsed is None:
            observation = format_error_message("no <function=...> block found in the reply")
        done = terminated or truncated
        metadata = {k: info[k] for k in ("instance_id", "exit_code", "format_error", "patch") if k in info}
        if terminated:
            metadata["report"] = info.get("report")
        metadata["backend"] = self.backend.name
        return {"observations": [] if done else [{"role": "user", "content": observation}],
                "reward": float(reward), "done": done, "metadata": metadata, "postprocessed_action": action}

    def close(self) -> None:
        self.env.close()
