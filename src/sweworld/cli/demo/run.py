"""What every step of ``sweworld demo`` shares: the run's state (``DemoRun``), a step (``Step``) and
where the real steps record their traces (``traces_path``). The steps import this module; the
command (``command.py``) imports the steps; nothing here imports either."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.envs import EnvBuilder
    from sweworld.htmlreport import Section


def traces_path(out: Path) -> Path:
    """The traces the real evaluation and rollout steps record (``<out>/world/traces.jsonl``)."""
    return out / "world" / "traces.jsonl"


@dataclass
class DemoRun:
    """What every step sees: the chosen instances, one shared builder, where outputs go, and what the
    earlier steps left for the later ones (``results``)."""

    dataset: str
    tasks: list[Task]
    builder: EnvBuilder
    out: Path
    workers: int
    instance: Task | None = None  # the isolation step's instance (default: the first of ``tasks``)
    results: dict[str, Any] = field(default_factory=dict)
    backend_name: str = "real"
    world_url: list[str] | None = None
    _backend: Any = None

    @property
    def backend(self):
        """The backend of the evaluation and rollout steps: real over the shared builder, recording
        traces (default), or the sim/hybrid one ``--backend`` names."""
        if self._backend is None:
            if self.backend_name == "real":
                from sweworld.backends.real import RealBackend
                self._backend = RealBackend(self.builder, traces=traces_path(self.out))
            else:
                from sweworld.cli.backend_opts import backend_from_options
                self._backend = backend_from_options(self.backend_name, world_url=self.world_url,
                                                     builder=self.builder, dataset=self.dataset)
        return self._backend


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[DemoRun], list[Section]]


__all__ = ["DemoRun", "Step", "traces_path"]
