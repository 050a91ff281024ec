"""Text actions in the XML form of SWE-World / R2E-Gym, for models without function calling.

    I will look at the file first.
    <function=execute_bash>
    <parameter=command>ls -la</parameter>
    </function>

`parse_text_action` reads one such block (the text before it is the thought), `render_text_action`
writes one, `tools_prompt` explains the tools and the format to a model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["FormatError", "ParsedAction", "format_error_message", "parse_text_action",
           "render_text_action", "tools_prompt"]

_FUNCTION = re.compile(r"<function\s*=\s*([^>\s]+?)\s*>(.*?)</function\s*>", re.DOTALL)
_OPEN_FUNCTION = re.compile(r"<function\s*=\s*([^>\s]+?)\s*>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter\s*=\s*([^>\s]+?)\s*>(.*?)</parameter\s*>", re.DOTALL)

FORMAT_EXAMPLE = ("<function=FUNCTION_NAME>\n<parameter=PARAMETER_NAME>value</parameter>\n"
                  "...\n</function>")


class FormatError(ValueError):
    """The model's reply is not a well-formed action; the message says what and shows the format."""

    def __init__(self, message: str):
        self.reason = message
        super().__init__(format_error_message(message))


def format_error_message(reason: str) -> str:
    """What was wrong plus the expected format, fit to send back to the model as an observation."""
    return (f"Format error: {reason}\nReply with exactly one function call in this format:\n"
            f"{FORMAT_EXAMPLE}")


class ParsedAction(BaseModel):
    """One action read from text."""

    name: str
    """Function (tool) name."""
    arguments: dict[str, str] = Field(default_factory=dict)
    """Parameter name -> value (always text; inner newlines kept)."""
    thought: str = ""
    """The text before the ``<function=`` block, stripped."""
    notes: list[str] = Field(default_factory=list)
    """Irregularities tolerated while parsing (extra blocks, unclosed block...), for counting."""


def _value(text: str) -> str:
    """Strip one leading and one trailing newline (the layout of the block), keep everything else."""
    if text.startswith("\r\n"):
        text = text[2:]
    elif text.startswith("\n"):
        text = text[1:]
    if text.endswith("\r\n"):
        text = text[:-2]
    elif text.endswith("\n"):
        text = text[:-1]
    return text


def _parameters(body: str) -> dict[str, str]:
    args: dict[str, str] = {}
    for match in _PARAMETER.finditer(body):
        args.setdefault(match.group(1), _value(match.group(2)))
    return args


def parse_text_action(text: str | None) -> ParsedAction | None:
    """The first ``<function=NAME>...</function>`` block of ``text``, or None when there is none.

    More than one block: the first is used and a note says so. A block opened but never closed is
    read to the end of the text (with a note). A repeated parameter keeps its first value.
    """
    if not text:
        return None
    matches = list(_FUNCTION.finditer(text))
    notes: list[str] = []
    if matches:
        first = matches[0]
        name, body, start = first.group(1), first.group(2), first.start()
        if len(matches) > 1:
            notes.append(f"{len(matches)} function blocks found; only the first ({name}) was used")
    else:
        opened = _OPEN_FUNCTION.search(text)
        if opened is None:
            return None
        name, body, start = opened.group(1), text[opened.end():], opened.start()
        notes.append(f"<function={name}> was not closed with </function>")
    return ParsedAction(name=name, arguments=_parameters(body), thought=text[:start].strip(),
                        notes=notes)


def require_text_action(text: str | None) -> ParsedAction:
    """Like `parse_text_action`, but a missing block is a `FormatError`."""
    action = parse_text_action(text)
    if action is None:
        raise FormatError("no <function=...> block found in the reply")
    return action


def render_text_action(name: str, arguments: dict[str, Any], thought: str = "") -> str:
    """One action as text; ``parse_text_action`` reads it back to the same name and arguments.

    Values that are not strings are written as JSON. Multi-line values get their own lines.
    """
    lines = [thought.strip()] if thought.strip() else []
    lines.append(f"<function={name}>")
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        if "\n" in text:
            lines.append(f"<parameter={key}>\n{text}\n</parameter>")
        else:
            lines.append(f"<parameter={key}>{text}</parameter>")
    lines.append("</function>")
    return "\n".join(lines)


def _describe(schema: dict[str, Any]) -> str:
    function = schema.get("function", schema)
    name = function.get("name", "?")
    out = [f"---- BEGIN FUNCTION: {name} ----", (function.get("description") or "").strip()]
    params = function.get("parameters") or {}
    required = set(params.get("required") or [])
    properties = params.get("properties") or {}
    if properties:
        out.append("Parameters:")
    for pname, spec in properties.items():
        kind = spec.get("type", "string")
        if "enum" in spec:
            kind += ", one of " + ", ".join(f"`{v}`" for v in spec["enum"])
        flag = "required" if pname in required else "optional"
        desc = (spec.get("description") or "").strip()
        out.append(f"  ({flag}) {pname} [{kind}]" + (f": {desc}" if desc else ""))
    out.append(f"---- END FUNCTION: {name} ----")
    return "\n".join(line for line in out if line)


def tools_prompt(schemas: list[dict[str, Any]]) -> str:
    """A system-prompt section listing the tools and the XML action format (no function calling)."""
    tools = "\n\n".join(_describe(schema) for schema in schemas)
    example = ""
    if schemas:
        first = schemas[0].get("function", schemas[0])
        props = list((first.get("parameters") or {}).get("properties") or {})[:2]
        example = ("\nFor example:\n"
                   + render_text_action(first.get("name", "tool"), {p: "..." for p in props}) + "\n")
    return (
        "You have access to the following functions:\n\n"
        f"{tools}\n\n"
        "To call a function, reply with your reasoning first, then EXACTLY ONE function call in "
        "this format:\n\n"
        f"{FORMAT_EXAMPLE}\n"
        f"{example}\n"
        "Rules:\n"
        "- One function call per reply, at the end of the reply; nothing after </function>.\n"
        "- Give every required parameter; values may span several lines and are taken verbatim.\n"
        "- Do not wrap the call in code fences or JSON."
    )
