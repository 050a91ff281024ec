"""execute_bash: run a command through the executor; the observation ends with the exit code."""

from __future__ import annotations

from typing import ClassVar

from sweworld.core.executor import Executor
from sweworld.tools.base import Tool, ToolError, ToolResult, schema, text
from sweworld.tools.truncate import MAX_CHARS, MAX_LINES, truncate_observation


def format_exec(output: str, exit_code: int, *, timed_out: bool = False, timeout: float | None = None,
                max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES) -> str:
    """Truncated output followed by ``[exit code: N]`` (or a line saying the command timed out)."""
    text = truncate_observation(output.strip("\n"), max_chars, max_lines)
    if timed_out:
        limit = f" after {timeout:g} seconds" if timeout else ""
        tail = f"[command timed out{limit} and was killed; exit code: {exit_code}]"
    else:
        tail = f"[exit code: {exit_code}]"
    return f"{text}\n{tail}" if text else tail


class BashTool(Tool):
    """Runs a bash command in the episode's shell. Refuses nothing: isolation is the executor's job."""

    name: ClassVar[str] = "execute_bash"
    description: ClassVar[str] = (
        "Execute a bash command in the terminal. The shell is persistent: the working directory and "
        "exported variables carry over between calls. Long outputs are cut in the middle. A command "
        "that runs past the timeout is killed; run long jobs in the background with output redirected "
        "to a file.")
    parameters: ClassVar[dict] = schema(("command",), command=text("The bash command to execute."),
                                        timeout={"type": "number", "description": "Optional wall timeout in seconds."})

    def __init__(self, *, default_timeout: float | None = None, max_timeout: float | None = None,
                 max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES):
        self.default_timeout = default_timeout
        self.max_timeout = max_timeout
        self.max_chars = max_chars
        self.max_lines = max_lines

    def execute(self, executor: Executor, command: str, timeout: float | None = None) -> ToolResult:
        if not command.strip():
            raise ToolError("The command is empty. Pass a bash command in 'command'.")
        if timeout is not None and timeout <= 0:
            raise ToolError(f"'timeout' must be a positive number of seconds, got {timeout!r}.")
        timeout = timeout or self.default_timeout
        if timeout and self.max_timeout:
            timeout = min(timeout, self.max_timeout)
        result = executor.run(command, timeout=timeout)
        observation = format_exec(result.output, result.exit_code, timed_out=result.timed_out,
                                  timeout=timeout, max_chars=self.max_chars, max_lines=self.max_lines)
        return ToolResult(observation=observation, exit_code=result.exit_code, simulated=result.simulated)
