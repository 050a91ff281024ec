"""Integrations with other frameworks, written against the ``Executor`` protocol only.

- ``sweworld.integrations.gym``: ``SWEEnv``, a gymnasium-style environment (``reset``/``step``) whose
  reward is the harness's verdict on the submitted diff; ``register_gym()`` registers it with
  gymnasium as ``sweworld/SWE-v0`` (extra ``gym``).
- ``sweworld.integrations.minisweagent``: ``SweworldEnvironment``, a mini-swe-agent ``Environment``
  over one sandbox episode (extra ``minisweagent``).

Neither gymnasium nor mini-swe-agent is needed to import this package: names load lazily.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "SWEEnv": "sweworld.integrations.gym", "register_gym": "sweworld.integrations.gym",
    "parse_action": "sweworld.integrations.gym",
    "SweworldEnvironment": "sweworld.integrations.minisweagent",
    "SweworldEnvironmentConfig": "sweworld.integrations.minisweagent",
    "from_task": "sweworld.integrations.minisweagent",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)
