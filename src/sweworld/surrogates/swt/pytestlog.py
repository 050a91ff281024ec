"""Reading recorded pytest output: per-test statuses, failure text, summary lines, the header.

The embedded SWT learns from real test runs (steps and evaluations): which tests passed or failed
in which workspace state, the failure section of each failed test (reused verbatim when it fails
again), its short-summary line, and the session header of each repository (platform, rootdir,
configfile), so that what it renders reads as the real runner would print it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sweworld.harness.grade import strip_ansi

STATUSES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")
_SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+(?:\[[^\]]*\])?)(?: - .*)?$")
_VERBOSE = re.compile(r"^(\S+::\S+(?:\[[^\]]*\])?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_REASON = re.compile(r"^\S+ (?:SKIPPED|XFAIL|XPASS) \((.*)\)\s+\[\s*\d+%\]$")
_HEADLINE = re.compile(r"^_{2,} (.+?) _{2,}$")
_TITLE = re.compile(r"^=+ (.+?) =+$")
_START = "test session starts"
WIDTH = 80


def sep(char: str, title: str | None = None, width: int = WIDTH) -> str:
    """A separator line as pytest's TerminalWriter writes it (``=== title ===``)."""
    if title is None:
        return char * width
    fill = char * max((width - len(title) - 2) // 2, 1)
    line = f"{fill} {title} {fill}"
    return line + char if len(line) + 1 <= width else line


def failure_key(test_id: str, tb: str = "auto") -> str:
    """The key of a recorded failure section: the test, and the traceback style when not the default."""
    return test_id if tb in ("auto", "long") else f"{test_id} --tb={tb}"


def headline(test_id: str) -> str:
    """The title of a test's failure section: ``Class.test`` of ``path::Class::test``."""
    return ".".join(test_id.split("::")[1:]) or test_id


@dataclass
class PytestLog:
    """What one recorded pytest output says."""

    statuses: dict[str, str] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)
    summaries: dict[str, str] = field(default_factory=dict)
    header: list[str] = field(default_factory=list)
    python: str = ""
    warnings: list[str] = field(default_factory=list)
    """The warnings summary when it names no test (collection-time warnings every run repeats)."""
    warning_count: int = 0
    """The interpreter ``-v`` names after the platform line."""
    partial: dict[str, list[str]] = field(default_factory=dict)
    """The tail of the last failure section when the output was cut above it (``| tail -N``)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """The reason ``-v`` shows after a skipped or xfailed test (``SKIPPED (reason)``)."""


def parse_pytest(text: str, tb: str = "auto") -> PytestLog:
    """Statuses (summary and ``-v`` lines), failure sections (keyed by ``failure_key`` for the
    run's traceback style), summary lines, header, interpreter, test-independent warnings, the
    reasons ``-v`` shows."""
    log = PytestLog()
    lines = strip_ansi(text).splitlines()  # a forced --color=yes wraps every status in escapes
    for line in lines:
        match = _SUMMARY.match(line)
        if match:
            log.statuses[match.group(2)] = match.group(1)
            if match.group(1) in ("FAILED", "ERROR"):
                log.summaries[match.group(2)] = line
            continue
        match = _VERBOSE.match(line)
        if match:
            log.statuses.setdefault(match.group(1), match.group(2))
            if (reason := _REASON.match(line)) is not None:
                log.reasons[match.group(1)] = reason.group(1)
    titles = {headline(t): t for t in log.statuses}
    current: str | None = None
    for line in lines:
        title = _HEADLINE.match(line)
        if title:
            current = titles.get(title.group(1))
            if current is not None:
                current = failure_key(current, tb)
                log.failures[current] = []
            continue
        if _TITLE.match(line) and not line.startswith("E "):
            current = None
        elif current is not None:
            log.failures[current].append(line)
    log.header = _header(lines)
    log.python = next((line.rsplit(" -- ", 1)[1] for line in lines
                       if line.startswith("platform ") and " -- /" in line), "")
    titles_seen = [m.group(1) for m in map(_TITLE.match, lines) if m]
    if log.summaries and "FAILURES" not in titles_seen and "short test summary info" in titles_seen:
        end = next(k for k, line in enumerate(lines) if (m := _TITLE.match(line)) and m.group(1) != "FAILURES")
        last = [t for t, s in log.statuses.items() if s == "FAILED"]
        if last and end:
            log.partial[failure_key(last[-1], tb)] = lines[:end]
    _warnings(log, lines)
    return log


def _warnings(log: PytestLog, lines: list[str]) -> None:
    start = next((k for k, line in enumerate(lines) if (m := _TITLE.match(line)) and m.group(1) == "warnings summary"),
                 None)
    if start is None:
        return
    end = next((k for k in range(start + 1, len(lines)) if _TITLE.match(lines[k])), len(lines))
    section = lines[start + 1:end]
    counts = [int(n) for n in re.findall(r"(\d+) warnings?\b", "\n".join(lines[end:]))]
    if counts and not any("::" in line for line in section):
        log.warnings, log.warning_count = section, counts[-1]


def _header(lines: list[str]) -> list[str]:
    for k, line in enumerate(lines):
        title = _TITLE.match(line)
        if title and title.group(1) == _START:
            out = []
            for after in lines[k + 1:]:
                if after.startswith(("collected ", "collecting ")) or not after.strip():
                    break
                if after.startswith("cachedir: "):
                    continue
                out.append(after.rsplit(" -- /", 1)[0] if after.startswith("platform ") else after)
            return out
    return []
