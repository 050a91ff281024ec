"""sympy's own test runner (``bin/test``), read and written.

``render_sympy(run, outcomes, failures, header=, duration=)`` writes what sympy's ``PyTestReporter``
(``sympy.testing.runtests``, 80 columns) prints: the ``test process starts`` banner and its header
(executable, cache, ground types, seeds: the repository's recorded one, else a plain one; ``cache``
as ``-C`` says); per test file ``path[N] `` then each test's result (``ok``/``F``/``E``/``f``/``X``,
one line per test with ``--verbose``, else one character each) and ``[OK]``/``[FAIL]`` aligned
right; the exceptions' then the failures' sections (``___ path:test ___`` and the traceback:
recorded, else a plain one) unless ``--tb=no``; the centred ``tests finished: N passed, ...`` line
(broken where it passes the width) and ``DO *NOT* COMMIT!`` after a failure. Exit code 1 when a
test failed or raised, else 0. ``parse_sympy`` reads statuses (``path::test``), failure sections
and the header back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sweworld.surrogates.swt.testcmd import TestRun

WIDTH = 80
START = "test process starts"
DEFAULT_HEADER = ["executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.20-final-0) [CPython]",
                  "architecture:       64-bit", "cache:              no", "ground types:       python ",
                  "numpy:              None", "random seed:        12345678",
                  "hash randomization: on (PYTHONHASHSEED=1234567890)"]
_CACHE = "cache:              "
_CHARS = {"PASSED": ".", "FAILED": "F", "ERROR": "E", "XFAIL": "f", "XPASS": "X", "SKIPPED": "s"}
_STATUS = {"ok": "PASSED", "F": "FAILED", "E": "ERROR", "T": "ERROR", "f": "XFAIL", "X": "XPASS",
           "s": "SKIPPED", "w": "SKIPPED", "K": "SKIPPED"}
_FILE = re.compile(r"^(\S+\.py)\[(\d+)\] (.*)$")
_RESULT = re.compile(r"^(test\w*) (?:.* )?(ok|F|E|T|f|X|s|w|K)(?:\s+\[(?:OK|FAIL)\])?$")
_SECTION = re.compile(r"^_* (\S+\.py):(\w+) _*$")


class _Writer:
    """The reporter's ``write``: it tracks the column to align ``[OK]`` and breaks a full line."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.wrap = False

    def write(self, text: str, right: bool = False) -> None:
        if right:
            if self.pos + len(text) > WIDTH:
                self.write("\n")
            self.write(" " * (WIDTH - self.pos - len(text)))
        if self.wrap and text[:1] != "\n":
            self.parts.append("\n")
        self.parts.append(text)
        last = text.rfind("\n")
        self.pos = self.pos + len(text) if last == -1 else len(text) - last - 1
        self.wrap = self.pos >= WIDTH
        self.pos %= WIDTH

    def center(self, text: str, delim: str = "=") -> None:
        text = f" {text} " if text else ""
        left = (WIDTH - len(text)) // 2
        self.write(delim * left + text + delim * (WIDTH - left - len(text)) + "\n")


def _finished(counts: dict[str, int], duration: float) -> str:
    text = f"tests finished: {counts['PASSED']} passed, "
    length = len(text)
    parts = [(counts["FAILED"], "failed"), (counts["SKIPPED"], "skipped"),
             (counts["XFAIL"], "expected to fail"), (counts["XPASS"], "expected to fail but passed"),
             (counts["ERROR"], "exceptions")]
    for n, word in [*((n, f"{n} {w}, ") for n, w in parts), (1, f"in {duration:.2f} seconds")]:
        if not n:
            continue
        if length + len(word) > WIDTH:
            text, length = text + "\n", 0
        text, length = text + word, length + len(word)
    return text


def _body(test_id: str, failures: dict[str, list[str]], status: str) -> str:
    lines = failures.get(test_id)
    if lines is None:
        path, name = test_id.split("::", 1)
        lines = ["Traceback (most recent call last):", f'  File "/testbed/{path}", line 1, in {name}',
                 "AssertionError" if status == "FAILED" else "Exception"]
    return "\n".join(lines) + "\n"


def render_sympy(run: TestRun, outcomes: Sequence[tuple[str, str]], failures: dict[str, list[str]], *,
                 header: Sequence[str] = (), duration: float = 0.0) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of ``bin/test`` for ``outcomes`` ((``path::test``, status), run order)."""
    out = _Writer()
    out.center(START)
    for line in header or DEFAULT_HEADER:
        out.write((_CACHE + ("yes" if run.cache else "no") if line.startswith(_CACHE) else line) + "\n")
    out.write("\n")
    files: dict[str, list[tuple[str, str]]] = {}
    for test_id, status in outcomes:
        path, _, name = test_id.partition("::")
        files.setdefault(path, []).append((name, status))
    for path, tests in files.items():
        out.write(f"{path}[{len(tests)}] ")
        for name, status in tests:
            if run.verbosity >= 1:
                out.write(f"\n{name} ")
            char = _CHARS.get(status, "F")
            if run.verbosity >= 1:
                char = "ok" if char == "." else " - s" if char == "s" else char
            out.write(char)
        out.write(" ")
        out.write("[FAIL]" if any(s in ("FAILED", "ERROR") for _, s in tests) else "[OK]", right=True)
        out.write("\n" + ("\n" if run.verbosity >= 1 else ""))
    out.write("\n")
    counts = {status: sum(s == status for _, s in outcomes) for status in _CHARS}
    for status in ("ERROR", "FAILED"):
        bad = [t for t, s in outcomes if s == status]
        if run.tb != "no" and bad:
            for test_id in bad:
                out.center("", "_")
                out.center(test_id.replace("::", ":", 1), "_")
                out.write(_body(test_id, failures, status))
            out.write("\n")
    out.center(_finished(counts, duration))
    failed = counts["FAILED"] + counts["ERROR"]
    if failed:
        out.write("DO *NOT* COMMIT!\n")
    return "".join(out.parts), "", 1 if failed else 0


@dataclass
class SympyLog:
    """What one recorded ``bin/test`` output says."""

    statuses: dict[str, str] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)
    header: list[str] = field(default_factory=list)


def parse_sympy(text: str) -> SympyLog:
    """Statuses (``--verbose`` result lines; sections for failures), failure sections, header."""
    log = SympyLog()
    lines = text.splitlines()
    path = None
    for k, line in enumerate(lines):
        if START in line and line.startswith("="):
            log.header = []
            for after in lines[k + 1:]:
                if not after.strip():
                    break
                log.header.append(after)
        elif (match := _FILE.match(line)) is not None:
            path = match.group(1)
        elif path is not None and (match := _RESULT.match(line)) is not None:
            log.statuses[f"{path}::{match.group(1)}"] = _STATUS[match.group(2)]
        elif (match := _SECTION.match(line)) is not None and k and set(lines[k - 1]) == {"_"}:
            test_id = f"{match.group(1)}::{match.group(2)}"
            body = []
            for after in lines[k + 1:]:
                if set(after) == {"_"} or "tests finished:" in after:
                    break
                body.append(after)
            while body and not body[-1].strip():
                body.pop()
            log.failures[test_id] = body
            if test_id not in log.statuses:
                failed = bool(body) and body[-1].startswith("AssertionError")
                log.statuses[test_id] = "FAILED" if failed else "ERROR"
    return log
