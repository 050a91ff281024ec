"""Where episodes come from: the one seam between the entry points and execution.

A ``Backend`` prepares what tasks need, opens an episode of a task as an ``Executor`` and evaluates
a prediction into the harness's report type. Entry points (``sweworld eval``, ``rollout``, ``exec``,
``shell``, ``demo``, ``SWEEnv``, the mini-swe-agent adapter) receive a backend and never build
environments or open sandboxes themselves:

- ``real`` (``RealBackend``): built environments, isolated copy-on-write sandboxes, the harness;
- ``sim`` (``SimBackend``): the same copy-on-write workspace of the base tree, no environment;
  navigation and editing run for real, code execution is predicted by SWT and the tests by SWR;
- ``hybrid`` (``HybridBackend``): sim, with a fraction of steps and evaluations also run for real
  and the disagreements stored.

``make_backend(name, **options)`` builds one by name (a registry of dotted paths, as
mini-swe-agent's; nothing heavy is imported before it is asked for).
"""

from __future__ import annotations

import importlib
from typing import Any

from sweworld.protocols import Backend

BACKENDS: dict[str, str] = {
    "real": "sweworld.backends.real:RealBackend",
    "sim": "sweworld.backends.sim:SimBackend",
    "hybrid": "sweworld.backends.hybrid:HybridBackend",
}


def make_backend(name: str, **options: Any) -> Backend:
    """The backend registered as ``name``, built with ``options`` (its constructor's keywords)."""
    try:
        module, _, attr = BACKENDS[name].partition(":")
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None
    return getattr(importlib.import_module(module), attr)(**options)


__all__ = ["BACKENDS", "Backend", "make_backend"]
