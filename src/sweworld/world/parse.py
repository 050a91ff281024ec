"""Reading what SWT and SWR wrote.

Both answer with a JSON object, possibly after reasoning (``<think>...</think>`` or plain text) and
possibly inside a fenced block (```json ... ```). The object is found as follows: the text after the
last ``</think>``; the whole of it if it is JSON; else the last fenced block that is a JSON object
with the required keys; else the last ``{...}`` object in the text with the required keys.

- SWT: ``{"stdout": str, "stderr": str, "exit_code": int}``, all three required (``exit_code`` may
  be an integral float; booleans and numeric strings are refused).
- SWR: reasoning, then ``{"test_report": str, "reward": 0|1}`` (``true``/``false`` and 0.0/1.0 are
  accepted); an optional ``"exit_code"`` (the test command's) is read when present.

Anything else raises ``SimParseError`` (a ``WorldError``) saying what was wrong: the callers retry
and, past their bound, turn it into a simulation failure, never an exception in the agent loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from sweworld.core.errors import WorldError

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.DOTALL)
_OPEN_FENCE_AT_END = re.compile(r"```[ \t]*\w*\s*$")
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = "</think>"
SWT_KEYS = ("stdout", "stderr", "exit_code")
SWR_KEYS = ("test_report", "reward")
Out = TypeVar("Out", bound=BaseModel)


class SimParseError(WorldError):
    """A world model's reply is not the JSON it must write."""


class SWTOutput(BaseModel):
    stdout: str
    stderr: str
    exit_code: int
    confidence: float | None = None
    """Optional: a model that knows how sure it is says so (the embedded SWT does; served models don't)."""


class SWROutput(BaseModel):
    reasoning: str
    test_report: str
    reward: int
    exit_code: int | None = None


def _excerpt(text: str, n: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= n else text[:n] + f"... [{len(text) - n} more chars]"


def _split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, answer): around the last ``</think>``, else ("", text)."""
    at = text.rfind(_THINK_CLOSE)
    if at < 0:
        return "", text
    return _THINK_OPEN.sub("", text[:at], count=1).strip(), text[at + len(_THINK_CLOSE):]


def _objects(text: str) -> list[tuple[int, dict[str, Any]]]:
    """Every top-level JSON object in ``text``, with its start offset."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, dict[str, Any]]] = []
    at = text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append((at, value))
        at = text.find("{", end)
    return found


def find_json(text: str, keys: tuple[str, ...]) -> tuple[dict[str, Any], int]:
    """The JSON object of a reply (see the module docstring) and where it starts in ``text``."""
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return whole, text.find(stripped[:1])
    candidates = [(m.start(), obj) for m in _FENCE.finditer(text) for _, obj in _objects(m.group(1))]
    candidates += _objects(text)
    complete = [(at, obj) for at, obj in candidates if all(k in obj for k in keys)]
    if complete:
        at, obj = max(complete, key=lambda item: item[0])
        return obj, at
    if candidates:
        at, obj = max(candidates, key=lambda item: item[0])
        return obj, at
    raise SimParseError(f"no JSON object in the reply: {_excerpt(text)!r}",
                        hint=f"the model must answer with a JSON object with keys {', '.join(keys)}")


def _require(obj: dict[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise SimParseError(f"the reply's JSON lacks {', '.join(map(repr, missing))}: {_excerpt(json.dumps(obj))}")


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SimParseError(f"{name} must be an integer, got {type(value).__name__} {_excerpt(repr(value), 60)}")
    if isinstance(value, float) and not value.is_integer():
        raise SimParseError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise SimParseError(f"{name} must be a string, got {type(value).__name__} {_excerpt(repr(value), 60)}")
    return value


def parse_swt(text: str | None) -> SWTOutput:
    """SWT's reply -> ``SWTOutput`` (``SimParseError`` when invalid)."""
    if not text or not text.strip():
        raise SimParseError("empty reply")
    obj, _ = find_json(_split_reasoning(text)[1], SWT_KEYS)
    _require(obj, SWT_KEYS)
    confidence = obj.get("confidence")
    return SWTOutput(stdout=_string(obj["stdout"], "stdout"), stderr=_string(obj["stderr"], "stderr"),
                     exit_code=_integer(obj["exit_code"], "exit_code"),
                     confidence=float(confidence) if isinstance(confidence, (int, float)) else None)


def parse_swr(text: str | None) -> SWROutput:
    """SWR's reply -> ``SWROutput`` (``SimParseError`` when invalid)."""
    if not text or not text.strip():
        raise SimParseError("empty reply")
    reasoning, answer = _split_reasoning(text)
    obj, at = find_json(answer, SWR_KEYS)
    _require(obj, SWR_KEYS)
    reward = obj["reward"]
    reward = int(reward) if isinstance(reward, bool) else _integer(reward, "reward")
    if reward not in (0, 1):
        raise SimParseError(f"reward must be 0 or 1, got {reward}")
    exit_code = obj.get("exit_code")
    if not reasoning:
        reasoning = _OPEN_FENCE_AT_END.sub("", answer[:at]).strip()
    return SWROutput(reasoning=reasoning, test_report=_string(obj["test_report"], "test_report"), reward=reward,
                     exit_code=None if exit_code is None else _integer(exit_code, "exit_code"))


class Sampled(BaseModel, Generic[Out]):
    """``n`` samples after retries: each parsed output, or None with its last error."""

    outputs: list[Out | None]
    errors: list[str | None]
    attempts: int = Field(description="Rounds of requests made (1 when every first reply was valid).")

    @property
    def valid(self) -> list[Out]:
        return [o for o in self.outputs if o is not None]


def sample(model: Any, messages: list[dict], n: int, parser: Callable[[str | None], Out], *,
           max_attempts: int) -> Sampled[Out]:
    """``n`` replies of ``model`` to ``messages``, parsed; invalid ones are asked again (``attempt``
    1, 2 ...) until valid or ``max_attempts`` rounds were made. ``ModelError`` (the endpoint failed
    after its own retries) propagates: that is infrastructure, not an invalid reply."""
    outputs: list[Out | None] = [None] * n
    errors: list[str | None] = ["no reply"] * n
    pending = list(range(n))
    attempt = 0
    while pending and attempt < max_attempts:
        replies = model.complete(messages, len(pending), attempt=attempt)
        if len(replies) != len(pending):
            raise WorldError(f"{type(model).__name__}.complete returned {len(replies)} replies for n={len(pending)}")
        for index, reply in zip(pending, replies, strict=True):
            try:
                outputs[index], errors[index] = parser(reply), None
            except SimParseError as exc:
                errors[index] = exc.message
        pending = [i for i in pending if outputs[i] is None]
        attempt += 1
    return Sampled[Any](outputs=outputs, errors=errors, attempts=attempt)
