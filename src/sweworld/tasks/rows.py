"""One row <-> one ``Task``: validation with located, actionable errors, and the plain-row dump.

A row is a plain mapping as found in a SWE-bench file. ``row_to_task`` turns it into a ``Task`` or
raises one ``DatasetError`` naming every bad field; ``dump_row`` writes a ``Task`` back as a row,
keeping unknown fields and the JSON-string encoding of list fields that arrived encoded.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from sweworld.core import names
from sweworld.core.errors import DatasetError
from sweworld.core.types import SWEBENCH_FIELDS, Task
from sweworld.tasks import families

#: Fields that accept a JSON-encoded string for a list; their encoding is remembered per task.
ENCODABLE_LIST_FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "pre_install", "pip_packages")

SKIP_HINT = "fix the row, or load with skip_invalid=True to skip invalid rows (they are reported)"

_ID_IN_TEXT = re.compile(r'"instance_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass
class RawRow:
    """One row as read from a source, before validation.

    ``where`` locates it (``file:line``, ``file[row N]``...); ``error`` is set when the row could not
    even be parsed (then ``data`` is None); ``instance_id`` is known when it could be read or guessed.
    """

    where: str
    data: Any = None
    error: str | None = None
    instance_id: str | None = None

    def __post_init__(self) -> None:
        if self.instance_id is None and isinstance(self.data, Mapping):
            value = self.data.get("instance_id")
            if isinstance(value, str) and value:
                self.instance_id = value


def sniff_instance_id(text: str) -> str | None:
    """The instance id found in a row's raw text, for rows that are not valid JSON."""
    match = _ID_IN_TEXT.search(text)
    if not match:
        return None
    try:
        return json.loads(f'"{match.group(1)}"')
    except ValueError:
        return match.group(1)


def locate(where: str, instance_id: str | None) -> str:
    """``where`` plus the instance id when it is known."""
    return f"{where} (instance_id={instance_id})" if instance_id else where


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_validation_error(exc: ValidationError) -> tuple[str, str]:
    """(message, hint) for a pydantic error: every bad field, what is wrong, what is expected."""
    problems: list[str] = []
    fields: list[str] = []
    for err in exc.errors(include_url=False):
        loc = err.get("loc") or ()
        field = str(loc[0]) if loc else "<row>"
        path = ".".join(str(part) for part in loc) or "<row>"
        if field not in fields:
            fields.append(field)
        if err.get("type") == "missing":
            problems.append(f"missing required field '{path}'")
        else:
            got = err.get("input")
            problems.append(f"field '{path}': {err.get('msg')} (got {_short(got)} of type {type(got).__name__})")
    expected = []
    for field in fields:
        info = Task.model_fields.get(field)
        if info is not None:
            desc = f" ({info.description})" if info.description else ""
            expected.append(f"'{field}' must be {_type_name(info.annotation)}{desc}")
    hint = "; ".join(expected)
    return "; ".join(problems), (hint + "; " if hint else "") + SKIP_HINT


def _plain_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the row with date/time values of declared string fields as ISO 8601 strings."""
    row = dict(data)
    for name, value in row.items():
        if isinstance(value, (dt.date, dt.datetime)) and name in Task.model_fields:
            row[name] = value.isoformat()
    return row


def row_to_task(raw: RawRow) -> Task:
    """Validate one raw row; raise a ``DatasetError`` located at ``raw.where`` (+ instance id)."""
    where = locate(raw.where, raw.instance_id)
    if raw.error is not None:
        raise DatasetError(raw.error, where=where, hint=SKIP_HINT)
    if not isinstance(raw.data, Mapping):
        raise DatasetError(f"expected a JSON object (one instance), got {type(raw.data).__name__}",
                           where=where, hint=SKIP_HINT)
    row = _plain_values(families.normalize(raw.data))
    try:
        task = Task.model_validate(row)
    except ValidationError as exc:
        message, hint = describe_validation_error(exc)
        raise DatasetError(message, where=where, hint=hint) from None
    names.check(task.instance_id, what="instance_id", where=where, hint=SKIP_HINT)  # it names log directories
    encoded = frozenset(name for name in ENCODABLE_LIST_FIELDS
                        if isinstance(row.get(name), str) and row[name].strip().startswith("["))
    if encoded:
        task._encoded_lists = encoded
    return task


def dump_row(task: Task) -> dict[str, Any]:
    """A task as a plain SWE-bench row (a new dict, safe to mutate).

    SWE-bench fields always appear; other declared fields only when set or not None; unknown fields
    follow unchanged. List fields that arrived as JSON-encoded strings are written encoded again.
    """
    row: dict[str, Any] = {}
    for name in type(task).model_fields:
        value = getattr(task, name)
        if name in SWEBENCH_FIELDS or value is not None or name in task.model_fields_set:
            row[name] = copy.deepcopy(value)
    for name, value in (task.model_extra or {}).items():
        row[name] = copy.deepcopy(value)
    for name in task._encoded_lists:
        if isinstance(row.get(name), list):
            row[name] = json.dumps(row[name])
    return row
