"""Chat rows for training, read and checked: what ``sweworld export sft`` (policy: OpenAI messages with
tool calls + ``tools``), ``sweworld export world`` (SWT/SWR) and a verifier export write, or any JSONL
of ``{"messages": [...]}`` rows.

A row must hold a non-empty ``messages`` list of ``{"role": system|user|assistant|tool, "content"}``
objects (``content`` a string, null or text parts; ``tool_calls`` a list of ``{"function": {"name",
"arguments"}}``) with at least one assistant turn, and may hold ``tools`` (a list of schemas, or that
list as a JSON string). The first bad row stops the read with one ``DatasetError`` at ``file:line``;
sharegpt rows (``conversations``) are refused with the way to re-export them. Kept: ``messages``
(cleaned by ``sweworld.data.formats.openai_messages``: text contents, tool-call arguments as asked)
and ``tools``; the rest is metadata, counted by kind (``TrainRow.kind``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sweworld.core.errors import DatasetError
from sweworld.data.formats import Arguments, openai_messages
from sweworld.data.tokens import message_texts
from sweworld.tasks.readers import read_jsonl

ROLES = ("system", "user", "assistant", "tool")
EXPORTS = "write rows with `sweworld export sft` (--format openai), `sweworld export world`, or one " \
          "{\"messages\": [{\"role\", \"content\"}, ...]} object per line"


class TrainRow(BaseModel):
    """One training conversation: the trainer's columns and where it came from."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    kind: str
    where: str


def _kind(row: dict[str, Any], tools: list | None) -> str:
    if isinstance(row.get("kind"), str) and row["kind"]:
        return row["kind"]  # swt, swr (export world)
    if row.get("label") in ("YES", "NO"):
        return "verifier"  # export verifier
    return "policy" if tools or any(m.get("tool_calls") for m in row["messages"]) else "chat"


def _message_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return f"is a {type(message).__name__}, not an object"
    if message.get("role") not in ROLES:
        return f"has the role {message.get('role')!r}; expected one of {', '.join(ROLES)}"
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        return f"has a {type(content).__name__} content; expected a string, null or a list of text parts"
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(
            isinstance(c, dict) and isinstance(c.get("function"), dict) and c["function"].get("name")
            for c in calls)):
        return "has tool_calls that are not a list of {\"function\": {\"name\", \"arguments\"}}"
    return None


def _tools(value: Any) -> list[dict[str, Any]] | str | None:
    """The tool schemas, or a str saying what is wrong with them."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else None
        except json.JSONDecodeError as exc:
            return f"'tools' is a string that is not JSON ({exc.msg})"
    if value is None or (isinstance(value, list) and all(isinstance(t, dict) for t in value)):
        return value or None
    return "'tools' is not a list of tool schemas (objects)"


def check_row(data: Any, where: str, arguments: Arguments = "object") -> TrainRow:
    """The ``TrainRow`` of one parsed JSON line, or ``DatasetError`` at ``where`` (see the module)."""
    if not isinstance(data, dict):
        raise DatasetError(f"a row is a JSON {type(data).__name__}, not an object", where=where, hint=EXPORTS)
    if "messages" not in data:
        sharegpt = "conversations" in data
        raise DatasetError("a sharegpt row (conversations), not a chat row" if sharegpt else
                           f"no 'messages' in the row (its keys: {', '.join(sorted(data)) or 'none'})", where=where,
                           hint="export it with `--format openai` (the default)" if sharegpt else EXPORTS)
    messages = data["messages"]
    if not isinstance(messages, list) or not messages:
        raise DatasetError("'messages' is not a non-empty list", where=where, hint=EXPORTS)
    for index, message in enumerate(messages):
        if problem := _message_problem(message):
            raise DatasetError(f"message {index} {problem}", where=where, hint=EXPORTS)
    if not any(m["role"] == "assistant" for m in messages):
        raise DatasetError("no assistant turn: nothing to train on", where=where,
                           hint="a training row ends with the reply the model should learn")
    tools = _tools(data.get("tools"))
    if isinstance(tools, str):
        raise DatasetError(tools, where=where, hint="give the tool schemas as a list (export sft writes them)")
    return TrainRow(messages=openai_messages(messages, arguments), tools=tools, kind=_kind(data, tools), where=where)


def load_rows(paths: Sequence[str | Path], arguments: Arguments = "object") -> list[TrainRow]:
    """Every row of the JSONL files ``paths``, checked; a missing, empty or bad file is a ``DatasetError``."""
    rows: list[TrainRow] = []
    for path in map(Path, paths):
        if path.is_dir():
            raise DatasetError("a directory, not a JSONL file of rows", where=str(path),
                               hint="give the file (export world writes DIR/swt.jsonl and DIR/swr.jsonl)")
        found = 0
        for raw in read_jsonl(path):
            if raw.error:
                raise DatasetError(raw.error, where=raw.where, hint=EXPORTS)
            rows.append(check_row(raw.data, raw.where, arguments))
            found += 1
        if not found:
            raise DatasetError("no rows (the file is empty)", where=str(path), hint=EXPORTS)
    return rows


def kinds(rows: Sequence[TrainRow]) -> dict[str, int]:
    """How many rows of each kind (policy, swt, swr, verifier, chat)."""
    return dict(Counter(row.kind for row in rows))


def row_texts(row: TrainRow | dict[str, Any]) -> list[str]:
    """The texts of a row (roles, contents, tool calls, tool schemas): a tokenizer's training corpus."""
    messages, tools = (row.messages, row.tools) if isinstance(row, TrainRow) else (row["messages"], row.get("tools"))
    texts = [text for message in messages for text in message_texts(message)]
    return [*texts, json.dumps(tools, ensure_ascii=False)] if tools else texts
