"""Chat rows in the two forms trainers read.

- ``openai``: ``{"messages": [...], "tools": [...]}``: OpenAI chat messages, assistant turns with
  ``tool_calls`` (``{"id", "type": "function", "function": {"name", "arguments"}}``), tool results as
  ``{"role": "tool", "tool_call_id", "content"}``; what TRL's ``SFTTrainer`` and most trainers take.
  ``arguments`` is the JSON string OpenAI sends (``arguments="string"``) or the decoded object that
  many Hugging Face chat templates expect (``arguments="object"``). A ``None`` content becomes "".
- ``sharegpt`` (LLaMA-Factory's): ``{"conversations": [{"from", "value"}], "system", "tools"}`` with
  ``human``/``observation`` turns at odd positions and ``gpt``/``function_call`` turns at even ones;
  ``tools`` is the schemas as a JSON string, a call's value is ``{"name", "arguments"}`` as JSON. The
  text a model wrote before a call has no place in a ``function_call`` turn and is left out (use
  ``openai`` to keep it).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from sweworld.core.errors import DatasetError

Format = Literal["openai", "sharegpt"]
Arguments = Literal["string", "object"]
FORMATS: tuple[str, ...] = ("openai", "sharegpt")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _decoded(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return arguments


def openai_messages(messages: list[dict[str, Any]], arguments: Arguments = "string") -> list[dict[str, Any]]:
    """A clean copy of ``messages``: text contents, tool-call arguments as asked."""
    out = []
    for message in messages:
        clean = {**message, "content": _text(message.get("content"))}
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = dict(call.get("function") or {})
                value = function.get("arguments")
                function["arguments"] = (_decoded(value) if arguments == "object" else
                                         value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
                calls.append({**call, "function": function})
            clean["tool_calls"] = calls
        out.append(clean)
    return out


def sharegpt(messages: list[dict[str, Any]], tools: list[dict] | None) -> dict[str, Any]:
    """``messages`` (OpenAI form) as a LLaMA-Factory sharegpt row (see the module docstring)."""
    system = "\n\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    turns: list[dict[str, str]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        if role == "assistant" and message.get("tool_calls"):
            calls = [{"name": (c.get("function") or {}).get("name", ""),
                      "arguments": _decoded((c.get("function") or {}).get("arguments"))}
                     for c in message["tool_calls"]]
            turns.append({"from": "function_call",
                          "value": json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)})
        elif role == "assistant":
            turns.append({"from": "gpt", "value": _text(message.get("content"))})
        elif role == "tool":
            turns.append({"from": "observation", "value": _text(message.get("content"))})
        elif role == "user":
            turns.append({"from": "human", "value": _text(message.get("content"))})
        else:
            raise DatasetError(f"a message has the role {role!r}", hint="expected system, user, assistant or tool")
    return {"conversations": turns, "system": system, "tools": json.dumps(tools or [], ensure_ascii=False)}


def chat_row(messages: list[dict[str, Any]], tools: list[dict] | None, fmt: Format = "openai",
             arguments: Arguments = "string") -> dict[str, Any]:
    """The row of ``messages`` in ``fmt`` (metadata is added by the caller)."""
    if fmt == "sharegpt":
        return sharegpt(messages, tools)
    if fmt != "openai":
        raise DatasetError(f"unknown format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    row: dict[str, Any] = {"messages": openai_messages(messages, arguments)}
    if tools is not None:
        row["tools"] = tools
    return row
