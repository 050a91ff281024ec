"""Issue text for a synthesized instance, written from its failing tests only.

- ``failure_details``: pytest output (``-rA`` with ``--tb=short``, ``long`` or ``auto``) -> one
  `Failure` per failing test: exception type, message, test-side location and statement.
- ``write_statement``: a deterministic Markdown issue from those failures (template phrasing).
- ``model_statement``: the same issue written by a chat model, with the template as fallback.

Nothing here reveals the fix: only test-side frames are kept; message lines that name a non-test
``file:line`` (with the source line under it) or hold a forbidden snippet (the original or mutated
text of the changed lines) are dropped; a model reply that leaks is refused.
"""

from __future__ import annotations

import builtins
import logging
import random
import re
import shlex
import zlib
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sweworld.core.errors import ModelError
from sweworld.models.base import ChatModel
from sweworld.synth.candidates import is_test_path

__all__ = ["Failure", "Statement", "failure_details", "model_statement", "write_statement"]

log = logging.getLogger(__name__)

_SECTION = re.compile(r"^=+ (.+?) =+$")
_HEADER = re.compile(r"^_+ (.+?) _+$")
_PHASE = re.compile(r"^ERROR at (setup|teardown) of (.+)$")
_FRAME = re.compile(r"^(\S+?):(\d+):(?: in (\S+)| (.*)|)$")
_E_LINE = re.compile(r"^E(?: {3,}|$)")
_EXC = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::\s|:?$)")
_PATH_LINE = re.compile(r"""([\w./\\-]+\.py)(?::(\d+)|"?, line (\d+))""")
_EQ = re.compile(r"^(?:AssertionError: )?assert (.+?) == (.+)$")
_NE = re.compile(r"^AssertionError: (?:\w+ differ: )?(.+?) != (.+)$")
_WHERE = re.compile(r"^\s*\+\s+where (.+?) = (.+)$")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_NOT_SUBJECT = {*dir(builtins), "raises", "approx", "fail", "skip", "warns", "param", "fixture"}
_MAX_MESSAGE_LINES = 12
_TITLES = ("{subject} misbehaves: {count} in {where} {verb}",
           "{subject} is broken: {count} in {where} {verb}",
           "Regression in {subject}: {count} in {where} {verb}")
_INTROS = ("On the current checkout of `{repo}`, {count} {verb}.",
           "I ran the tests of `{repo}` and {count} {verb}.",
           "Something is off in `{repo}`: {count} {verb}.")


class Failure(BaseModel):
    """What the pytest output tells about one failing test (test-side facts only)."""

    model_config = ConfigDict(frozen=True)

    test: str
    """The pytest node id."""
    when: Literal["setup", "call", "teardown", "collect"] = "call"
    """The phase that failed (``setup``/``teardown`` for ``ERROR at ... of``; ``collect`` for the file)."""
    exc_type: str | None = None
    """The exception type (``AssertionError`` for a bare ``assert``), None when unknown."""
    message: str = ""
    """The ``E`` lines of the final exception, dedented (or the short-summary message)."""
    location: str | None = None
    """``path:line`` of the deepest frame in test code, None when there is no traceback."""
    statement: str | None = None
    """The source line at ``location``."""
    raised_in_test: bool | None = None
    """True when the exception left from test code, False from library code, None when unknown."""
    summary: str | None = None
    """The message of the ``FAILED``/``ERROR`` line of the short test summary."""


class Statement(BaseModel):
    """An issue text and who wrote it."""

    text: str
    source: Literal["model", "template"]
    reason: str | None = None
    """Why the template was used instead of the model (None when the model text was kept)."""


def _blocks(output: str) -> list[tuple[str, list[str]]]:
    """The ``___ name ___`` blocks of the FAILURES and ERRORS sections, without captured output."""
    blocks: list[tuple[str, list[str]]] = []
    section, captured = "", False
    for line in output.splitlines():
        line = line.rstrip()
        if match := _SECTION.match(line):
            section = match.group(1).strip()
        elif section in ("FAILURES", "ERRORS"):
            header = _HEADER.match(line)
            if header and set(header.group(1)) - {"_", " "}:
                blocks.append((header.group(1), []))
                captured = False
            elif blocks and not captured:
                captured = line.startswith("---") and "Captured" in line
                blocks[-1][1].append(line)
    return blocks


def _parse_block(test_file: str, lines: list[str]) -> dict:
    frames: list[list] = []  # [path, lineno, statement]
    pointer, pending, groups, crash, in_e = None, None, [], None, False
    for line in lines:
        if _E_LINE.match(line):
            if not in_e:
                groups.append([])
            groups[-1].append(line[1:])
            in_e = True
            continue
        in_e = False
        if match := _FRAME.match(line):
            path, lineno, func, rest = match.groups()
            frames.append([path, int(lineno), None if func else pointer])
            pending, pointer = (frames[-1] if func else None), None
            if rest and _EXC.match(rest.strip()):
                crash = rest.strip()
        elif line.startswith(">"):
            pointer = line[1:].strip()
        elif pending is not None and line.startswith("    ") and set(line) - set(" ^~"):
            pending[2], pending = line.strip(), None
    details: dict = {}
    message = groups[-1] if groups else []
    if message:
        indent = min((len(m) - len(m.lstrip()) for m in message if m.strip()), default=0)
        details["message"] = "\n".join(m[indent:] for m in message).strip("\n")
    if frames:
        test_side = [f for f in frames if is_test_path(f[0]) or f[0].endswith(test_file)]
        details["raised_in_test"] = frames[-1] in test_side
        if test_side:
            details["location"] = f"{test_side[-1][0]}:{test_side[-1][1]}"
            details["statement"] = test_side[-1][2]
    details["exc_type"] = crash
    return details


def _exc_type(message: str) -> str | None:
    first = message.split("\n", 1)[0].strip()
    if match := _EXC.match(first):
        return match.group(1)
    return "AssertionError" if first.startswith("assert ") else None


def failure_details(output: str, failing: Sequence[str]) -> dict[str, Failure]:
    """Per-test details from pytest ``-rA`` output: one `Failure` for every id in ``failing``.

    A test's block is found by its header (``Class.test[param]``, ``ERROR at setup of ...``, or the
    ``ERROR collecting <file>`` of its file); a test without a block still gets the message of its
    short-summary line, and one absent from the output gets an entry with no details.
    """
    wanted = set(failing)
    summary: dict[str, tuple[str, str | None]] = {}
    for line in output.splitlines():
        kind, _, rest = line.rstrip().partition(" ")
        if kind in ("FAILED", "ERROR"):
            cuts = [m.start() for m in re.finditer(" - ", rest)] + [len(rest)]
            for cut in cuts:
                if rest[:cut] in wanted and (rest[:cut] not in summary or kind == "FAILED"):
                    summary[rest[:cut]] = (kind, rest[cut + 3:] or None)
                    break
    blocks: dict[str, list[tuple[str, list[str]]]] = {}
    for header, lines in _blocks(output):
        phase = _PHASE.match(header)
        when, name = phase.groups() if phase else ("call", header)
        if header.startswith("ERROR collecting "):
            when, name = "collect", header.removeprefix("ERROR collecting ")
        blocks.setdefault(name, []).append((when, lines))
    order = {"setup": 0, "call": 1, "teardown": 2, "collect": 3}
    result: dict[str, Failure] = {}
    for test in failing:
        test_file, _, rest = test.partition("::")
        candidates = blocks.get(rest.replace("::", "."), []) or blocks.get(test_file, [])
        candidates = sorted(candidates, key=lambda c: (not any(f"{test_file}:" in x for x in c[1]),
                                                       order[c[0]]))
        kind, short = summary.get(test, (None, None))
        fields: dict = {"when": "setup" if kind == "ERROR" else "call"}
        if candidates:
            fields = {"when": candidates[0][0], **_parse_block(test_file, candidates[0][1])}
        fields["message"] = fields.get("message") or short or ""
        fields["exc_type"] = _exc_type(fields["message"]) or fields.get("exc_type")
        result[test] = Failure(test=test, summary=short, **fields)
    return result


def _norm(text: str) -> str:
    return "".join(text.split())


class _Guard:
    """Decides which lines may be shown: no forbidden snippet, no non-test ``file:line``."""

    def __init__(self, forbidden: Sequence[str], test_files: Collection[str]):
        pieces = (_norm(line) for snippet in forbidden for line in snippet.splitlines())
        self.snippets = tuple(dict.fromkeys(p for p in pieces if len(p) >= 3))
        self.test_files = set(test_files)

    def ok(self, line: str) -> bool:
        if any(s in _norm(line) for s in self.snippets):
            return False
        return all(not (m.group(2) or m.group(3)) or is_test_path(m.group(1)) or m.group(1) in self.test_files
                   for m in _PATH_LINE.finditer(line))

    def clean(self, text: str) -> list[str]:
        """Safe lines of ``text``; a dropped frame line takes its more-indented source lines along."""
        kept: list[str] = []
        skip_deeper: int | None = None
        for line in text.splitlines():
            depth = len(line) - len(line.lstrip())
            if skip_deeper is not None and depth > skip_deeper and line.strip():
                continue
            skip_deeper = None
            if self.ok(line):
                kept.append(line)
            elif _PATH_LINE.search(line):
                skip_deeper = depth
        return kept


_Facts = tuple[Failure, list[str], str | None, str | None]  # failure, message lines, statement, comparison


def _prepare(failures: dict[str, Failure] | Sequence[Failure],
             forbidden: Sequence[str]) -> tuple[list[_Facts], list[str], _Guard]:
    """What is safe to show of each failure, the test files, and the guard for any further line."""
    items = list(failures.values()) if isinstance(failures, dict) else list(failures)
    files = list(dict.fromkeys(f.test.partition("::")[0] for f in items))
    guard = _Guard(forbidden, files)
    facts = []
    for failure in items:
        message = guard.clean(failure.message)[:_MAX_MESSAGE_LINES]
        statement = failure.statement if failure.statement and guard.ok(failure.statement) else None
        facts.append((failure, message, statement, _comparison(message)))
    return facts, files, guard


def _subject(statements: list[str]) -> str | None:
    votes: Counter[str] = Counter()
    for statement in statements:
        for name in _CALL.findall(statement):
            last = name.rsplit(".", 1)[-1]
            if last not in _NOT_SUBJECT and not last.startswith(("assert", "test", "_")):
                votes[last] += 1
                break
    top = votes.most_common(1)
    return f"`{top[0][0]}()`" if top and top[0][1] * 2 > len(statements) else None


def _comparison(lines: list[str]) -> str | None:
    for line in lines:
        if match := _EQ.match(line.strip()) or _NE.match(line.strip()):
            actual, expected = match.groups()
            if len(actual) + len(expected) > 200:
                return None
            where = next((w for w in map(_WHERE.match, lines) if w), None)
            extra = f" (`{where.group(2)}` gives `{where.group(1)}`)" if where else ""
            return f"Expected `{expected}`, but got `{actual}`{extra}."
    return None


def _fenced(lines: list[str], lang: str = "") -> list[str]:
    return [f"```{lang}", *lines, "```", ""] if lines else []


def write_statement(failures: dict[str, Failure] | Sequence[Failure], *, repo: str,
                    test_cmd: str = "python -m pytest", forbidden: Sequence[str] = (),
                    max_tests: int = 5, seed: int | None = None) -> str:
    """A Markdown issue from the failing tests only: title, what is observed, the failing tests (up
    to ``max_tests``, then "and N more") and the command that reproduces it.

    Library frames and lines are never shown, and no line holds a ``forbidden`` snippet (compared
    without whitespace; snippets shorter than 3 characters are too generic and ignored). Phrasing
    varies with ``seed`` (by default derived from the test ids): the same inputs give the same text.
    """
    facts, files, guard = _prepare(failures, forbidden)
    n, shown = len(facts), facts[:max_tests]
    rng = random.Random(zlib.crc32("\n".join(f[0].test for f in facts).encode()) if seed is None else seed)
    subject = _subject([f[2] for f in facts if f[2]]) or f"`{repo}`"
    count, verb = f"{n} test{'' if n == 1 else 's'}", "fails" if n == 1 else "fail"
    where = files[0] if len(files) == 1 else f"{len(files)} test files"
    out = [rng.choice(_TITLES).format(subject=subject, count=count, where=where, verb=verb), "",
           rng.choice(_INTROS).format(repo=repo, count=count, verb=verb), "", "### What happens", ""]
    groups: dict[tuple, list[_Facts]] = {}
    for fact in shown:
        groups.setdefault((fact[0].exc_type, *fact[1]) if fact[1] else (fact[0].test,), []).append(fact)
    for (failure, message, statement, comparison), *same in groups.values():
        phase = f" during {failure.when}" if failure.when != "call" else ""
        exc = f" with `{failure.exc_type}`" if failure.exc_type else ""
        at = f" at `{failure.location}`" if failure.location else ""
        out += [f"`{failure.test}` fails{phase}{exc}{at}:" if message or statement
                else f"`{failure.test}` fails{phase}{exc}{at} (the output shows no details).", ""]
        out += _fenced([statement] if statement else [], "python") + _fenced(message)
        out += [comparison, ""] if comparison else []
        if same:
            out += ["The same error shows up in " + ", ".join(f"`{f[0].test}`" for f in same) + ".", ""]
    out += ["### Failing tests", "", *(f"- `{f[0].test}`" for f in shown)]
    out += [f"- and {n - len(shown)} more", ""] if n > len(shown) else [""]
    command = [f"{test_cmd} {' '.join(shlex.quote(f[0].test) for f in shown)}"]
    if n > len(shown):
        command.append(f"{test_cmd} {' '.join(shlex.quote(f) for f in files)}  # all of them")
    out += ["### How to reproduce", "", *_fenced(command, "sh")]
    return "\n".join(line for line in out if guard.ok(line)).strip() + "\n"


_SYSTEM = ("You are a developer who uses the project {repo} and files a GitHub issue about a bug you "
           "hit. Write the issue in Markdown, as a user would: a short title line, what you did, what "
           "you observed and what you expected, and the command to reproduce. Only use the facts given; "
           "do not guess the cause, do not propose a fix and do not invent library code.")


def model_statement(model: ChatModel, failures: dict[str, Failure] | Sequence[Failure], *, repo: str,
                    test_cmd: str = "python -m pytest", forbidden: Sequence[str] = (),
                    max_tests: int = 5, seed: int | None = None) -> Statement:
    """The issue written by ``model`` from the same safe facts `write_statement` uses.

    Falls back to `write_statement` (``source="template"``, with a ``reason`` and a logged warning)
    when the model fails (`ModelError`), answers nothing, or leaks a forbidden snippet or a non-test
    ``file:line``.
    """
    facts, files, guard = _prepare(failures, forbidden)
    lines = [f"Failing tests ({len(facts)}); reproduce with: {test_cmd} "
             + " ".join(shlex.quote(f[0].test) for f in facts[:max_tests])]
    for failure, message, statement, comparison in facts[:max_tests]:
        lines += ["", f"- test: {failure.test} (fails during {failure.when})"]
        lines += [f"  exception: {failure.exc_type}"] if failure.exc_type else []
        lines += [f"  failing test line ({failure.location}): {statement}"] if statement else []
        lines += ["  error output:", *(f"    {line}" for line in message)] if message else []
        lines += [f"  {comparison}"] if comparison else []
    if len(facts) > max_tests:
        lines += ["", f"... and {len(facts) - max_tests} more failing tests in: {', '.join(files)}"]
    messages = [{"role": "system", "content": _SYSTEM.format(repo=repo)},
                {"role": "user", "content": "\n".join(line for line in lines if guard.ok(line))}]
    try:
        text = (model.complete(messages).content or "").strip()
    except ModelError as exc:
        reason = f"model error: {exc.message}"
    else:
        bad = not all(guard.ok(line) for line in text.splitlines())
        if text and not bad:
            return Statement(text=text + "\n", source="model")
        reason = "the reply leaks forbidden text or library locations" if bad else "empty reply"
    log.warning("model statement not used (%s); falling back to the template", reason)
    text = write_statement(failures, repo=repo, test_cmd=test_cmd, forbidden=forbidden, max_tests=max_tests,
                           seed=seed)
    return Statement(text=text, source="template", reason=reason)
