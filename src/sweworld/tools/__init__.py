"""Agent tools over any ``Executor``: execute_bash, str_replace_editor, search, submit (alias finish)."""

from sweworld.tools.base import Tool, ToolError, ToolResult, ToolSet
from sweworld.tools.bash import BashTool, format_exec
from sweworld.tools.default import default_tools
from sweworld.tools.editor import EditorTool
from sweworld.tools.search import SearchTool
from sweworld.tools.submit import SubmitTool
from sweworld.tools.truncate import truncate_observation

__all__ = ["BashTool", "EditorTool", "SearchTool", "SubmitTool", "Tool", "ToolError", "ToolResult", "ToolSet",
           "default_tools", "format_exec", "truncate_observation"]
