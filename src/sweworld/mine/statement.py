"""The problem statement of a mined instance.

Without a model it is the commit (or merge) message, with the issues and pull requests it names
(``#123``, ``Fixes #123``, ``gh-123``, ``owner/name#123``) listed after it. SWE-bench's rows hold
the GitHub issue text itself, which needs GitHub; the references say where it is.

With a model (``--model-url``) the statement is written from the fix, the failing tests and the
message, as R2E-Gym back-translates one (prompt: ``templates/statement.md.jinja``). A reply that
contains an added line of the fix (any line of 12 or more characters, whitespace-normalised) is
refused and the message is used instead; the row says which (``statement_source``) and why.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import ModelError
from sweworld.mine.split import added_lines
from sweworld.models.base import ChatModel

log = logging.getLogger(__name__)

TEMPLATE = Path(__file__).parent / "templates" / "statement.md.jinja"
LEAK_MIN_CHARS = 12
"""An added line of the fix shorter than this (``return x``, ``else:``) is not a leak when quoted."""
MAX_PATCH_CHARS = 12000
_REFERENCE = re.compile(r"(?<![\w/])(?:(?P<repo>[\w.-]+/[\w.-]+)#(?P<n1>\d+)|#(?P<n2>\d+)|gh-(?P<n3>\d+))\b", re.I)
_PULL = re.compile(r"^Merge pull request #(\d+)|\(#(\d+)\)\s*$", re.M)


@dataclass(frozen=True)
class Statement:
    text: str
    source: str
    """``message`` (the commit message), ``model``, or ``message (model refused: why)``."""
    references: tuple[str, ...] = ()


def references(message: str) -> tuple[str, ...]:
    """The issues and pull requests ``message`` names, in order, each once (``#12``, ``owner/name#12``)."""
    out: dict[str, None] = {}
    for match in _REFERENCE.finditer(message):
        number = match.group("n1") or match.group("n2") or match.group("n3")
        out[f"{match.group('repo')}#{number}" if match.group("repo") else f"#{number}"] = None
    return tuple(out)


def pull_number(message: str) -> str | None:
    """The pull request a merge or squash commit comes from (``Merge pull request #12``, ``... (#12)``)."""
    match = _PULL.search(message)
    return (match.group(1) or match.group(2)) if match else None


def message_statement(message: str) -> Statement:
    refs = references(message)
    text = message.strip() + "\n"
    if refs:
        text += "\nReferences: " + ", ".join(refs) + "\n"
    return Statement(text=text, source="message", references=refs)


def _norm(text: str) -> str:
    return " ".join(text.split())


def leaked_line(statement: str, patch: str) -> str | None:
    """The first added line of ``patch`` (of at least ``LEAK_MIN_CHARS``) that ``statement`` contains."""
    body = _norm(statement)
    for line in added_lines(patch):
        norm = _norm(line)
        if len(norm) >= LEAK_MIN_CHARS and norm in body:
            return line.strip()
    return None


def prompt(repo: str, message: str, fail_to_pass: list[str], patch: str, test_patch: str) -> str:
    import jinja2

    template = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True).from_string(
        TEMPLATE.read_text(encoding="utf-8"))
    return template.render(repo=repo, message=message.strip(), references=references(message),
                           fail_to_pass=fail_to_pass, patch=patch[:MAX_PATCH_CHARS],
                           test_patch=test_patch[:MAX_PATCH_CHARS])


def model_statement(model: ChatModel, *, repo: str, message: str, fail_to_pass: list[str], patch: str,
                    test_patch: str) -> Statement:
    """The statement ``model`` writes; the message when it fails, answers nothing or leaks the fix."""
    fallback = message_statement(message)
    try:
        reply = model.complete([{"role": "user", "content": prompt(repo, message, fail_to_pass, patch, test_patch)}])
        text = (reply.content or "").strip()
    except ModelError as exc:
        why = f"model error: {exc.message.splitlines()[0]}"
    else:
        leak = leaked_line(text, patch) if text else None
        if text and leak is None:
            return Statement(text=text + "\n", source="model", references=fallback.references)
        why = f"the reply quotes the fix: {leak!r}" if leak else "empty reply"
    log.warning("model statement not used (%s); the commit message is the statement", why)
    return Statement(text=fallback.text, source=f"message (model refused: {why})", references=fallback.references)
