"""Snapshot, fork and restore of an executor that keeps a step history over a workspace executor
(``protocols.Branchable``): a sim episode (its world model reads the history), a traced one (its
trace steps follow it). The files and the shell are the workspace's; the history goes beside them,
so a fork's next prediction or trace step sees the same past."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sweworld.core.errors import SnapshotError
from sweworld.core.protocols import Branchable, why_not_branchable
from sweworld.world.context import HistoryStep


@dataclass(eq=False)
class HistorySnapshot:
    """The workspace's handle (``workspace``) and the history (and step count) at that moment."""

    workspace: Any
    history: list[HistoryStep]
    steps: int = 0

    @property
    def id(self) -> str:
        return self.workspace.id

    @property
    def bytes(self) -> int:
        return self.workspace.bytes


class HistoryBranches:
    """The mixin: ``branch_workspace()`` is the executor whose files are copied, ``branch_child(ws)``
    a new executor like this one over ``ws``; ``history`` (and ``steps`` where kept) go beside."""

    history: list[HistoryStep]
    #: steps taken, where the executor counts them (a traced episode's trace step numbers)
    steps: int = 0

    def branch_workspace(self) -> Any:
        raise NotImplementedError

    def branch_child(self, workspace: Any) -> Any:
        raise NotImplementedError

    def branching_unsupported(self) -> str | None:
        reason = why_not_branchable(self.branch_workspace())
        return None if reason is None else f"{type(self).__name__}'s workspace cannot branch: {reason}"

    def _workspace(self) -> Branchable:
        reason = self.branching_unsupported()
        if reason is not None:
            raise SnapshotError(reason)
        return self.branch_workspace()

    def snapshot(self) -> HistorySnapshot:
        return HistorySnapshot(self._workspace().snapshot(), list(self.history), self.steps)

    def fork(self, handle: HistorySnapshot | None = None) -> Any:
        child = self.branch_child(self._workspace().fork(None if handle is None else handle.workspace))
        child.history = list(self.history if handle is None else handle.history)
        child.steps = self.steps if handle is None else handle.steps
        return child

    def restore(self, handle: HistorySnapshot) -> None:
        self._workspace().restore(handle.workspace)
        self.history = list(handle.history)
        self.steps = handle.steps

    def release(self, handle: HistorySnapshot) -> None:
        self._workspace().release(handle.workspace)
