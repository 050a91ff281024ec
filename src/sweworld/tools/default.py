"""The default tool set: above the concrete tools (``tools.base`` imports none of them)."""

from __future__ import annotations

from sweworld.tools.base import ToolSet
from sweworld.tools.bash import BashTool
from sweworld.tools.editor import EditorTool
from sweworld.tools.search import SearchTool
from sweworld.tools.submit import SubmitTool


def default_tools() -> ToolSet:
    """execute_bash, str_replace_editor, search and submit (alias finish), each with fresh state."""
    return ToolSet([BashTool(), EditorTool(), SearchTool(), SubmitTool()])


__all__ = ["default_tools"]
