"""One session object for the seams: open an episode, call a tool, diff, close.

A seam holds one ``Session`` (apart from itself, so that a finalizer can close what it holds); it
opens at most one episode at a time, calls the agent's tools (``sweworld.tools``) in it, takes its
diff and closes it (idempotently). ``grade`` is ``seam.grade`` of what it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sweworld.tools import ToolResult, ToolSet, default_tools

if TYPE_CHECKING:
    from sweworld.core.executor import Executor
    from sweworld.core.protocols import Backend
    from sweworld.core.types import Task


class Session:
    """One seam's episode and its tools."""

    def __init__(self, tools: ToolSet | None = None):
        self.tools: ToolSet = tools or default_tools()
        self.executor: Executor | None = None

    @property
    def is_open(self) -> bool:
        return self.executor is not None

    def open(self, backend: Backend, task: Task, **options: Any) -> Executor:
        """A fresh episode of ``task`` (the one held before is closed; the tools' state reset)."""
        self.close()
        self.tools.reset()
        self.executor = backend.open(task, **options)
        return self.executor

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """One tool call in the open episode (``RuntimeError`` when none is open)."""
        if self.executor is None:
            raise RuntimeError("no open episode: open one first")
        return self.tools.call(self.executor, name, arguments)

    def diff(self) -> str:
        """The open episode's changes against the base commit ("" when none is open)."""
        return self.executor.diff() if self.executor is not None else ""

    def close(self) -> None:
        """Close the open episode, if any."""
        executor, self.executor = self.executor, None
        if executor is not None:
            executor.close()
