"""submit (alias finish): end the episode; the harness grades the workspace's diff."""

from __future__ import annotations

from typing import ClassVar

from sweworld.core.executor import Executor
from sweworld.tools.base import Tool, ToolResult, schema, text


class SubmitTool(Tool):
    name: ClassVar[str] = "submit"
    aliases: ClassVar[tuple[str, ...]] = ("finish",)
    description: ClassVar[str] = (
        "Submit your changes and end the task. Call it once the fix is complete; the current state of "
        "the repository is what gets evaluated.")
    parameters: ClassVar[dict] = schema(result=text("Optional final message (ignored)."))

    def execute(self, executor: Executor, result: str | None = None) -> ToolResult:
        return ToolResult(observation="submitted", submitted=True)
