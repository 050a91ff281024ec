"""pytest's terminal report, written from per-test outcomes.

``render_pytest(run, outcomes, facts)`` writes what ``pytest`` prints for these outcomes with the
run's options, following ``_pytest.terminal`` (80 columns): the session header (recorded for the
repository, else a plain one; ``cachedir:`` when the run has one) unless ``-q`` or ``--no-header``;
progress (letters with ``[ NN%]``, one line per file without ``-q``, one line per test with
``-v``); the FAILURES section (each failed test's recorded section, else its source up to the
failing assertion); PASSES with ``-rA`` (not with ``--tb=no``); the short test summary in
report-character order (recorded summary lines reused, else ``FAILED id - AssertionError`` trimmed
to the width as pytest trims it); the final ``N failed, M passed in X.XXs`` line. Exit code 1 when
a test failed or errored, 0 when tests ran and none did, 5 when none ran, 4 when a path argument
does not exist (``ERROR: file or directory not found`` on stderr) or a node id names no test of
its file (``ERROR: not found``, as the pytest of the recorded header words it: ``no name`` before
pytest 8, ``no match`` and the innermost collector since).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sweworld.surrogates.swt.pytestlog import WIDTH, failure_key, headline, sep
from sweworld.surrogates.swt.testcmd import TestRun

LETTERS = {"PASSED": ".", "FAILED": "F", "ERROR": "E", "SKIPPED": "s", "XFAIL": "x", "XPASS": "X"}
COUNTED = (("FAILED", "failed"), ("PASSED", "passed"), ("SKIPPED", "skipped"), ("DESELECTED", "deselected"),
           ("XFAIL", "xfailed"), ("XPASS", "xpassed"), ("WARNINGS", "warning"), ("ERROR", "error"))
DEFAULT_HEADER = ["platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0", "rootdir: /testbed"]


@dataclass
class RenderFacts:
    """What rendering reuses: the repository's header, recorded failure sections and summary lines,
    and a fallback writer of a failure section (``test_id -> lines``)."""

    header: list[str] = field(default_factory=list)
    failures: dict[str, list[str]] = field(default_factory=dict)
    summaries: dict[str, str] = field(default_factory=dict)
    fallback: Callable[[str, str], list[str]] = lambda test_id, tb: ["", "E       AssertionError"]
    duration: float = 0.0
    python: str = ""
    warnings: list[str] = field(default_factory=list)
    warning_count: int = 0
    cachedir: str = ""
    """The ``cachedir:`` header line (pytest writes it with ``-v``, or when the cache is elsewhere)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Recorded reasons of skipped and xfailed tests, which ``-v`` shows."""


def _trimmed(line: str, message: str, width: int = WIDTH) -> str:
    """``line - message`` trimmed as pytest's ``_format_trimmed`` trims it."""
    message = message.split("\n", 1)[0]
    available = width - len(line)
    if available < 3 + 3:
        return line
    if 3 + len(message) > available:
        message = message[:max(available - 3 - 3, 0)] + "..."
    return f"{line} - {message}"


def _percent(done: int, total: int) -> str:
    return f" [{done * 100 // total:3d}%]" if total else " [100%]"


def _reason(text: str, reason: str) -> str:
    """`` (reason)`` after a ``-v`` line, trimmed to the width as pytest's ``_format_trimmed`` does."""
    available = WIDTH - len(text) - len(" [100%]") - 1
    reason = reason.split("\n", 1)[0]
    if available < 3 + 3:
        return ""
    if 3 + len(reason) > available:
        reason = reason[:available - 3 - 3] + "..."
    return f" ({reason})"


def _progress(run: TestRun, outcomes: Sequence[tuple[str, str]], interrupted: bool = False,
              reasons: dict[str, str] | None = None) -> list[str]:
    lines: list[str] = []
    line, path, total = "", None, len(outcomes)
    for done, (test_id, status) in enumerate(outcomes, 1):
        if run.verbosity >= 1:
            text = f"{test_id} {status}"
            if status in ("SKIPPED", "XFAIL", "XPASS") and test_id in (reasons or {}):
                text += _reason(text, (reasons or {})[test_id])
            lines.append(text + _percent(done, total).rjust(WIDTH - len(text) - 1))
            continue
        file = test_id.split("::", 1)[0]
        if run.verbosity == 0 and file != path:
            if path is not None:
                lines.append(line + _percent(done - 1, total).rjust(WIDTH - len(line) - 1))
            line, path = file + " ", file
        line += LETTERS.get(status, "F")
        if done < total and len(line) + 8 >= WIDTH:
            lines.append(line + _percent(done, total))
            line = ""
    if outcomes and run.verbosity <= 0:  # an interrupted session (-x) writes no final percentage
        lines.append(line if interrupted else line + _percent(total, total).rjust(WIDTH - len(line) - 1))
    return lines


def _summary(run: TestRun, outcomes: Sequence[tuple[str, str]], facts: RenderFacts) -> list[str]:
    out: list[str] = []
    chars = run.reportchars.replace("P", "")
    for char in dict.fromkeys(chars):
        status = {"p": "PASSED", "s": "SKIPPED", "x": "XFAIL", "X": "XPASS", "E": "ERROR", "f": "FAILED"}.get(char)
        for test_id, got in outcomes:
            if got != status:
                continue
            if status in ("FAILED", "ERROR"):
                recorded = facts.summaries.get(test_id, "")
                out.append(recorded if recorded.startswith(status + " ") else
                           _trimmed(f"{status} {test_id}", "AssertionError"))
            elif status == "SKIPPED":
                out.append(f"SKIPPED [1] {test_id.split('::', 1)[0]}: skipped")
            else:
                out.append(f"{status} {test_id}")
    return out


def _stats(outcomes: Sequence[tuple[str, str]], deselected: int, duration: float, warnings: int = 0) -> str:
    counts = {status: sum(s == status for _, s in outcomes) for status, _ in COUNTED}
    counts["DESELECTED"], counts["WARNINGS"] = deselected, warnings
    parts = []
    for status, word in COUNTED:
        n = counts[status]
        if n:
            parts.append(f"{n} {word}{'s' if word in ('error', 'warning') and n != 1 else ''}")
    return f"{', '.join(parts) or 'no tests ran'} in {duration:.2f}s"


def _collected(run: TestRun, n: int, deselected: int) -> str:
    total = n + deselected
    text = f"collected {total} item{'' if total == 1 else 's'}"
    if deselected:
        text += f" / {deselected} deselected / {n} selected"
    return ("collecting ... " if run.verbosity >= 1 else "") + text


def not_found_error(test_id: str, root: str, header: Sequence[str], texts: Mapping[str, str]) -> str:
    """pytest's usage error for a node id that names no test of its file."""
    arg, (path, *names) = f"{root}/{test_id}", test_id.split("::")
    version = re.search(r"\bpytest-(\d+)\.", header[0] if header else DEFAULT_HEADER[0])
    if version and int(version[1]) < 8:
        return f"ERROR: not found: {arg}\n(no name {arg!r} in any of [<Module {path}>])\n\n"
    text = texts.get(path, "")
    cls = re.search(rf"^class {re.escape(names[0])}\b(\(.*\))?", text, re.M) if len(names) > 1 else None
    kind = "UnitTestCase" if cls and "TestCase" in (cls[1] or "") else "Class"
    where = f"<{kind} {names[0]}>" if cls else f"<Module {path.rsplit('/', 1)[-1]}>"
    return f"ERROR: not found: {arg}\n(no match in any of [{where}])\n\n"


def render_pytest(run: TestRun, outcomes: Sequence[tuple[str, str]], facts: RenderFacts, *,
                  deselected: int = 0, missing: Sequence[str] = (), not_found: Sequence[str] = (),
                  root: str = "/testbed", texts: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of pytest for ``outcomes`` ((test id, status) in run order);
    ``missing``: arguments naming no file, ``not_found``: node ids naming no test of their file
    (either: no test runs, pytest's usage error, exit code 4); ``texts``: test files by path."""
    if missing or not_found:
        outcomes, deselected = [], 0
    if run.exitfirst:
        stop = next((k for k, (_, s) in enumerate(outcomes) if s in ("FAILED", "ERROR")), None)
        outcomes = outcomes if stop is None else outcomes[:stop + 1]
    lines: list[str] = []
    if run.verbosity >= 0:
        header = list(facts.header or DEFAULT_HEADER) if run.header else []
        if header and run.verbosity >= 1 and facts.python and header[0].startswith("platform "):
            header[0] += f" -- {facts.python}"
        if header and facts.cachedir:
            header.insert(1, facts.cachedir)
        lines += [sep("=", "test session starts"), *header, _collected(run, len(outcomes), deselected), ""]
    failed = [t for t, s in outcomes if s in ("FAILED", "ERROR")]
    progress = _progress(run, outcomes, interrupted=run.exitfirst and bool(failed), reasons=facts.reasons)
    lines += progress + ([""] if progress and run.verbosity >= 0 else [])
    if failed and run.tb != "no":
        lines.append(sep("=", "FAILURES"))
        for test_id in failed:
            body = facts.failures.get(failure_key(test_id, run.tb)) or facts.fallback(test_id, run.tb)
            lines += body if run.tb == "line" else [sep("_", headline(test_id)), *body]
    if facts.warnings and outcomes:
        lines += [sep("=", "warnings summary"), *facts.warnings]
    if "P" in run.reportchars and run.tb != "no" and any(s == "PASSED" for _, s in outcomes):
        lines.append(sep("=", "PASSES"))
    summary = _summary(run, outcomes, facts)
    if summary:
        lines += [sep("=", "short test summary info"), *summary]
    if run.exitfirst and failed:
        lines.append(sep("!", "stopping after 1 failures"))
    stats = _stats(outcomes, deselected, facts.duration, facts.warning_count if facts.warnings and outcomes else 0)
    lines.append(stats if run.verbosity < 0 else sep("=", stats))
    stdout = ("\n" if (missing or not_found) and run.verbosity < 0 else "") + "\n".join(lines) + "\n"
    if missing:
        return stdout, "".join(f"ERROR: file or directory not found: {m}\n\n" for m in missing[:1]), 4
    if not_found:
        return stdout, "".join(not_found_error(t, root, facts.header, texts or {}) for t in not_found), 4
    exit_code = 1 if failed else 0 if outcomes else 5
    return stdout, "", exit_code
