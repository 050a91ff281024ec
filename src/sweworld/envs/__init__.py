"""Environments: interpreter discovery, install recipes, venv builds in the sandbox, the env cache.

Public names are imported lazily so that ``sweworld.envs.discovery`` and ``.recipe`` stay light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "EnvBuilder": "sweworld.envs.build", "Environment": "sweworld.envs.build",
    "InstanceLayer": "sweworld.envs.build", "episode_sandbox": "sweworld.envs.episode",
    "open_episode": "sweworld.envs.episode", "list_envs": "sweworld.envs.store",
    "remove_env": "sweworld.envs.store",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)
