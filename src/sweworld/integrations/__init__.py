"""Integrations with other frameworks, written against the ``Backend`` and ``Executor`` protocols only.

- ``sweworld.integrations.gym``: ``SWEEnv``, a gymnasium environment (``reset``/``step``) whose
  reward is the backend's verdict on the submitted diff; ``SWEEnv.make(...)`` wraps it in
  gymnasium's ``OrderEnforcing`` and ``TimeLimit``; ``register_gym()`` registers it with gymnasium as
  ``sweworld/SWE-v0`` (extra ``gym``).
- ``sweworld.integrations.minisweagent``: ``SweworldEnvironment``, a mini-swe-agent ``Environment``
  over one episode (extra ``minisweagent``).
- ``sweworld.integrations.inspect_sandbox``: the inspect-ai sandbox ``sweworld`` (``--sandbox
  sweworld``); ``inspect_task.sweworld_task``, sweworld's datasets as inspect tasks (extra ``inspect``).
- ``sweworld.integrations.swerex``: ``sweworld runtime serve``, swerex-remote's HTTP protocol over
  episodes, for SWE-agent (extra ``swerex``).
- ``sweworld.integrations.openenv``: ``sweworld openenv serve``, an OpenEnv environment server
  (``SWEWorldEnvironment``: a session's episodes, reset/step/state over OpenEnv's WebSocket protocol,
  the reward on submit) for OpenEnv's clients and the trainers that drive them (extra ``openenv``).
- ``sweworld.integrations.openhands``: OpenHands' agent with its terminal and file editor acting in an
  episode (extra ``openhands``, Python >= 3.12).
- ``sweworld.integrations.harbor``: ``SweworldEnvironment``, a Harbor environment (extra ``harbor``,
  Python >= 3.12).
- ``sweworld.integrations.trl``: ``environment_factory`` and ``dataset`` for TRL's ``GRPOTrainer``:
  one episode per rollout, the agent's tools as the environment's methods, ``get_reward`` the backend's
  verdict on the rollout's patch (extra ``train``); ``sweworld train rl`` runs it (``sweworld.train.grpo``).
- ``sweworld.integrations.verl``: ``SWEWorldAgentLoop``, a verl agent loop (``agent_name`` ``sweworld``)
  keeping one episode per trajectory, its reward the backend's verdict (extra ``verl``).
- ``sweworld.integrations.episodes``: what they share: the task a framework names (an id, an image
  name), the backend its config asks for.

The first two take a ``Backend`` (``sweworld.backends``: ``RealBackend(...)``, a sim backend...) or a
``sweworld.core.config.BackendConfig`` (both through ``sweworld.backends.make_backend``); without one
they use ``default_backend()``. Neither gymnasium nor mini-swe-agent is needed to import this
package: names load lazily.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweworld.backends import Backend

DEFAULT_BACKEND = "real"
"""The backend the integrations use when given none (a name of ``sweworld.backends.BACKENDS``)."""

_EXPORTS = {
    "SWEEnv": "sweworld.integrations.gym", "register_gym": "sweworld.integrations.gym",
    "parse_action": "sweworld.integrations.gym",
    "SweworldEnvironment": "sweworld.integrations.minisweagent",
    "SweworldEnvironmentConfig": "sweworld.integrations.minisweagent",
    "from_task": "sweworld.integrations.minisweagent",
}
__all__ = sorted([*_EXPORTS, "DEFAULT_BACKEND", "default_backend"])


def default_backend(**options: Any) -> Backend:
    """The backend used when none is given: ``sweworld.backends.make_backend`` of ``DEFAULT_BACKEND``
    with ``options`` (the one place that builds it)."""
    from sweworld.backends import make_backend
    return make_backend(DEFAULT_BACKEND, **options)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)
