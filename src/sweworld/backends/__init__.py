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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sweworld.executor import Executor
from sweworld.types import Task

if TYPE_CHECKING:
    from sweworld.harness.predictions import Prediction
    from sweworld.harness.report import InstanceReport

BACKENDS: dict[str, str] = {
    "real": "sweworld.backends.real:RealBackend",
    "sim": "sweworld.backends.sim:SimBackend",
    "hybrid": "sweworld.backends.hybrid:HybridBackend",
}


@runtime_checkable
class Backend(Protocol):
    """Prepares tasks, opens episodes, evaluates predictions."""

    #: ``real``, ``sim`` or ``hybrid`` (recorded with every step and report).
    name: str

    def prepare(self, task: Task) -> None:
        """Build or fetch what ``task`` needs before an episode opens (``InfraError`` when it cannot)."""
        ...

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> Executor:
        """A fresh episode of ``task`` (its own copy-on-write workspace at the base commit)."""
        ...

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = 1800.0) -> InstanceReport:
        """Grade ``prediction``: always a report (errors included), written to ``log_dir`` with the
        files of a SWE-bench run."""
        ...


def make_backend(name: str, **options: Any) -> Backend:
    """The backend registered as ``name``, built with ``options`` (its constructor's keywords)."""
    try:
        module, _, attr = BACKENDS[name].partition(":")
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None
    return getattr(importlib.import_module(module), attr)(**options)


__all__ = ["BACKENDS", "Backend", "make_backend"]
