"""Django's test runner around unittest's report: its lines before the progress and after the result.

``learned_parts(text)`` takes from a recorded run of ``tests/runtests.py`` / ``manage.py test`` the
lines before the first test's result (``Testing against Django installed in ...``, ``Importing
application``, ``Found N test(s).``, the test database's creation and migrations, ``System check
identified ...``) and those after the final ``OK`` / ``FAILED`` line (``Destroying test database
...``). ``preamble(run, learned, n)`` writes them for a run of ``n`` tests: ``Found`` counts these
tests, ``Importing application`` names the run's labels' applications (``--verbosity 2``), ``with up
to N processes`` follows ``--parallel``; below verbosity 2 the lines only it prints (applications,
unused databases, migrations, the database's name) are left out; without a recorded run, the
lines Django 4 prints for tests that need no database. ``epilogue(run, learned)``: the same for
the lines after the result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sweworld.surrogates.swt.testcmd import TestRun

TESTING = "Testing against Django installed in '/testbed/django'"
_FOUND = re.compile(r"^Found \d+ test\(s\)\.$")
_IMPORTING = "Importing application "
_PROCESSES = re.compile(r" with up to \d+ processes$")
_VERBOSE_ONLY = ("Importing application ", "Skipping setup of unused database", "Operations to perform:",
                 "Synchronizing apps without migrations:", "Running migrations:", "  ")
_ALIAS = re.compile(r"^((?:Creating|Destroying|Cloning|Using existing) test database for alias '\w+')"
                    r" \(.*\)(\.\.\.)$")
_RESULT = re.compile(r"^(?:OK|FAILED|NO TESTS RAN)(?: \(.*\))?$")
_OLD = ("Testing against Django", "System check identified", "Creating test database", "Found ",
        "Cloning test database", "Using existing test database")


def learned_parts(text: str) -> tuple[list[str], list[str]]:
    """(the lines before the progress, the lines after the result) of a recorded Django run."""
    lines = text.splitlines()
    check = next((k for k, line in enumerate(lines[:400]) if line.startswith("System check identified")),
                 None)
    head = lines[:check + 1] if check is not None else [line for line in lines[:20] if line.startswith(_OLD)]
    end = next((k for k in range(len(lines) - 1, -1, -1) if _RESULT.match(lines[k])), None)
    tail = [line for line in lines[end + 1:] if line.strip()] if end is not None else []
    return head, tail


def _processes(line: str, parallel: int | None) -> str:
    if parallel is None:
        return line
    line = _PROCESSES.sub("", line)
    return line + (f" with up to {parallel} processes" if parallel > 1 else "")


def _at(run: TestRun, lines: Sequence[str]) -> list[str]:
    """``lines`` as Django prints them at the run's verbosity (module docstring)."""
    if run.verbosity >= 2:
        return list(lines)
    return [_ALIAS.sub(r"\1\2", line) for line in lines if not line.startswith(_VERBOSE_ONLY)]


def epilogue(run: TestRun, learned: Sequence[str]) -> list[str]:
    return _at(run, learned)


def preamble(run: TestRun, learned: Sequence[str], n: int) -> list[str]:
    """The lines Django prints before the progress of ``n`` tests (module docstring)."""
    labels = [t for t in run.targets if "/" not in t] if run.verbosity >= 2 else []
    apps = list(dict.fromkeys(t.split(".", 1)[0] for t in labels))
    if not learned:
        first = TESTING + (" with up to 16 processes" if run.parallel is None else "")
        return [_processes(first, run.parallel), *(_IMPORTING + app for app in apps), f"Found {n} test(s).",
                "System check identified no issues (0 silenced)."]
    out: list[str] = []
    for line in learned:
        if line.startswith(_IMPORTING) and apps:
            if not any(o.startswith(_IMPORTING) for o in out):
                out += [_IMPORTING + app for app in apps]
        elif _FOUND.match(line):
            out.append(f"Found {n} test(s).")
        else:
            out.append(_processes(line, run.parallel) if line.startswith("Testing against Django") else line)
    return _at(run, out)
