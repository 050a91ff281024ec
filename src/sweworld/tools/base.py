"""Tool, ToolResult and ToolSet: agent tools written against the ``Executor`` protocol only.

A tool never raises for the agent's mistakes: bad or missing arguments, an unknown tool or a path
outside the workspace come back as ``ToolResult(error=True)`` (counted as format errors), and a
command that fails is an ordinary observation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from sweworld.core.executor import Executor

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}


def schema(required: tuple[str, ...] = (), **properties: dict) -> dict:
    """A tool's ``parameters``: a JSON-schema object of ``properties`` (in order), ``required`` named."""
    return {"type": "object", "properties": properties, "required": list(required)}


def text(description: str) -> dict:
    """A string property of a tool's ``parameters``."""
    return {"type": "string", "description": description}


class ToolResult(BaseModel):
    """What a tool call returns to the agent."""

    observation: str = Field(description="Text shown to the agent.")
    exit_code: int | None = Field(default=None, description="Exit status of the command (execute_bash only).")
    submitted: bool = Field(default=False, description="The agent submitted; the episode ends.")
    error: bool = Field(default=False, description="Bad arguments or tool misuse (a format error).")
    simulated: bool = Field(default=False, description="The world's transition model predicted (part of) it.")


class ToolError(Exception):
    """Raised inside a tool for misuse; turned into ``ToolResult(error=True)`` by ``Tool.__call__``."""


def _coerce(value: Any, spec: dict) -> Any:
    """Accept what text-format actions send: every value arrives as a string there."""
    kind = spec.get("type")
    if not isinstance(value, str) or kind in (None, "string"):
        return value
    text = value.strip()
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if kind in ("array", "object"):
            return json.loads(text)
    except ValueError:
        pass
    return value


def _type_ok(value: Any, kind: str | None) -> bool:
    if kind is None:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _PY_TYPES.get(kind, (object,)))


class Tool:
    """One agent tool: a name, a description, a JSON schema of its arguments and ``execute``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict] = {"type": "object", "properties": {}, "required": []}
    """The JSON schema of the arguments (``schema(...)`` writes one)."""
    #: Other names the tool answers to (``finish`` for ``submit``).
    aliases: ClassVar[tuple[str, ...]] = ()

    def schema(self) -> dict:
        """The OpenAI function-calling description of this tool."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def reset(self) -> None:
        """Forget per-episode state (none by default)."""

    def validate(self, args: dict) -> dict:
        """Check ``args`` against ``parameters``; return them coerced, or raise ``ToolError``."""
        props: dict = self.parameters.get("properties", {})
        usage = self.usage()
        unknown = sorted(set(args) - set(props))
        if unknown:
            raise ToolError(f"Unknown argument(s) {unknown} for tool '{self.name}'. {usage}")
        missing = [k for k in self.parameters.get("required", []) if args.get(k) is None]
        if missing:
            raise ToolError(f"Missing required argument(s) {missing} for tool '{self.name}'. {usage}")
        out: dict = {}
        for key, value in args.items():
            if value is None:
                continue
            spec = props[key]
            value = _coerce(value, spec)
            if not _type_ok(value, spec.get("type")):
                raise ToolError(f"Argument '{key}' of tool '{self.name}' must be of type {spec.get('type')}, "
                                f"got {type(value).__name__}: {value!r}. {usage}")
            if "enum" in spec and value not in spec["enum"]:
                raise ToolError(f"Argument '{key}' of tool '{self.name}' must be one of {spec['enum']}, "
                                f"got {value!r}.")
            item_kind = spec.get("items", {}).get("type") if spec.get("type") == "array" else None
            if item_kind and not all(_type_ok(v, item_kind) for v in value):
                raise ToolError(f"Argument '{key}' of tool '{self.name}' must be a list of {item_kind}, "
                                f"got {value!r}.")
            out[key] = value
        return out

    def usage(self) -> str:
        props: dict = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        listed = ", ".join(f"{k} ({'required' if k in required else 'optional'})" for k in props)
        return f"Valid arguments: {listed or 'none'}."

    def __call__(self, executor: Executor, **args: Any) -> ToolResult:
        return self.invoke(executor, args)

    def invoke(self, executor: Executor, args: dict) -> ToolResult:
        """Validate ``args`` and run; misuse becomes ``ToolResult(error=True)``."""
        try:
            return self.execute(executor, **self.validate(args))
        except ToolError as exc:
            return ToolResult(observation=f"ERROR: {exc}", error=True)

    def execute(self, executor: Executor, **args: Any) -> ToolResult:
        raise NotImplementedError


class ToolSet:
    """The tools of one agent, looked up by name or alias, with their per-episode state."""

    def __init__(self, tools: Iterable[Tool]):
        self.tools: list[Tool] = list(tools)
        self._by_name: dict[str, Tool] = {}
        for tool in self.tools:
            for name in (tool.name, *tool.aliases):
                if name in self._by_name:
                    raise ValueError(f"two tools are named {name!r}")
                self._by_name[name] = tool

    @property
    def names(self) -> list[str]:
        """Primary tool names, in order."""
        return [tool.name for tool in self.tools]

    def get(self, name: str) -> Tool | None:
        return self._by_name.get(name)

    def schemas(self) -> list[dict]:
        return [tool.schema() for tool in self.tools]

    def reset(self) -> None:
        """Start a new episode: forget undo history and any other per-episode state."""
        for tool in self.tools:
            tool.reset()

    def call(self, executor: Executor, name: str, args: dict | str | None = None) -> ToolResult:
        """Run tool ``name``; misuse comes back as ``ToolResult(error=True)``, never an exception.

        ``args`` may be a dict or a JSON object string (function-calling arguments as sent).
        """
        tool = self._by_name.get(name)
        if tool is None:
            valid = ", ".join(sorted(self._by_name))
            return ToolResult(observation=f"ERROR: Unknown tool {name!r}. Valid tools: {valid}.", error=True)
        if args is None:
            args = {}
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                return ToolResult(observation=f"ERROR: Arguments of tool '{name}' are not valid JSON ({exc}). "
                                  f"{tool.usage()}", error=True)
        if not isinstance(args, dict):
            return ToolResult(observation=f"ERROR: Arguments of tool '{name}' must be a JSON object, "
                              f"got {type(args).__name__}. {tool.usage()}", error=True)
        return tool.invoke(executor, args)
