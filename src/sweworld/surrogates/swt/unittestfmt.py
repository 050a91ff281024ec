"""unittest's and Django's test-runner report, read and written.

Tests are named as unittest names them, ``test_m (pkg.mod.Class.test_m)``; a pytest id
(``pkg/mod.py::Class::test_m``) is converted, and a function outside a class is not a unittest
test. ``render_unittest`` writes the progress (dots, or ``name (id) ... ok`` lines at verbosity 2),
each failure's section (recorded, else a plain traceback), ``Ran N tests in X.XXXs`` and ``OK`` /
``FAILED (failures=F, errors=E)``, all on stderr as unittest writes it; Django's runner adds its
recorded preamble (or a plain one). ``parse_unittest`` reads statuses and failure sections back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sweworld.surrogates.swt.testcmd import TestRun

_VERBOSE = re.compile(r"^(\w+) \(([\w.]+)\)(?:\n.*?)? \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)",
                      re.MULTILINE)
_NOTES = re.compile(r"^(\w+ \([\w.]+\))(?:\n(.*?))? \.\.\. (?:skipped (.+)|ok|FAIL|ERROR|expected failure"
                    r"|unexpected success)$", re.MULTILINE)
_SECTION = re.compile(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)$")
_WORDS = {"PASSED": "ok", "FAILED": "FAIL", "ERROR": "ERROR", "SKIPPED": "skipped", "XFAIL": "expected failure",
          "XPASS": "unexpected success"}
_STATUS = {"ok": "PASSED", "FAIL": "FAILED", "ERROR": "ERROR", "skipped": "SKIPPED", "expected failure": "XFAIL",
           "unexpected success": "XPASS"}


def unittest_name(test_id: str) -> str | None:
    """``test_m (pkg.mod.Class.test_m)`` for a pytest id or a unittest name; None for a function."""
    if "::" not in test_id:
        return test_id
    path, *rest = test_id.split("::")
    if len(rest) < 2:
        return None
    module = path.removesuffix(".py").replace("/", ".")
    return f"{rest[-1]} ({module}.{'.'.join(rest)})"


def dotted(name: str) -> str:
    """The dotted path of a unittest name (``pkg.mod.Class.test_m``)."""
    match = re.match(r"^(\w+) \(([\w.]+)\)", name)
    if not match:
        return name
    method, where = match.groups()
    return where if where.endswith("." + method) else f"{where}.{method}"


def parse_unittest(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(statuses by unittest name, failure sections by unittest name) of a recorded run."""
    statuses = {f"{m.group(1)} ({m.group(2)})": _STATUS[m.group(3)] for m in _VERBOSE.finditer(text)}
    failures: dict[str, list[str]] = {}
    lines = text.splitlines()
    for k, line in enumerate(lines):
        match = _SECTION.match(line)
        if not match or k + 1 >= len(lines) or not lines[k + 1].startswith("-" * 70):
            continue
        name = f"{match.group(2)} ({match.group(3)})"
        body = []
        for after in lines[k + 2:]:
            if after.startswith(("=" * 70, "-" * 70)):
                break
            body.append(after)
        failures[name] = body
        statuses[name] = "FAILED" if match.group(1) == "FAIL" else "ERROR"
    return statuses, failures


def parse_notes(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """(docstring line by unittest name, skip reason as printed by unittest name) of a verbose run."""
    descriptions, reasons = {}, {}
    for match in _NOTES.finditer(text):
        if match.group(2):
            descriptions[match.group(1)] = match.group(2)
        if match.group(3):
            reasons[match.group(1)] = match.group(3)
    return descriptions, reasons


def _line(name: str, status: str, descriptions: dict[str, str], reasons: dict[str, str]) -> str:
    head = f"{name}\n{descriptions[name]}" if name in descriptions else name
    word = _WORDS.get(status, "FAIL")
    reason = f" {reasons[name]}" if status == "SKIPPED" and name in reasons else ""
    return f"{head} ... {word}{reason}"


def render_unittest(run: TestRun, outcomes: Sequence[tuple[str, str]], failures: dict[str, list[str]], *,
                    preamble: Sequence[str] = (), epilogue: Sequence[str] = (), duration: float = 0.0,
                    descriptions: dict[str, str] | None = None,
                    reasons: dict[str, str] | None = None) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of unittest / Django's runner for ``outcomes`` (unittest names)."""
    lines = list(preamble)
    if run.verbosity >= 2:
        lines += [_line(name, status, descriptions or {}, reasons or {}) for name, status in outcomes]
        lines.append("")
    else:
        lines.append("".join({"PASSED": ".", "SKIPPED": "s", "ERROR": "E", "XFAIL": "x", "XPASS": "u"}.get(s, "F")
                             for _, s in outcomes))
    bad = [(n, s) for n, s in outcomes if s == "ERROR"] + [(n, s) for n, s in outcomes if s == "FAILED"]
    for name, status in bad:
        where = dotted(name)
        module, method = where.rsplit(".", 2)[0], where.rsplit(".", 1)[-1]
        body = failures.get(name) or ["Traceback (most recent call last):",
                                       f'  File "/testbed/{module.replace(".", "/")}.py", in {method}',
                                       "AssertionError", ""]
        lines += ["=" * 70, f"{'FAIL' if status == 'FAILED' else 'ERROR'}: {name}", "-" * 70, *body]
    n = len(outcomes)
    lines += ["-" * 70, f"Ran {n} test{'' if n == 1 else 's'} in {duration:.3f}s", ""]
    counts = [f"failures={sum(s == 'FAILED' for _, s in bad)}" if any(s == "FAILED" for _, s in bad) else "",
              f"errors={sum(s == 'ERROR' for _, s in bad)}" if any(s == "ERROR" for _, s in bad) else "",
              f"skipped={sum(s == 'SKIPPED' for _, s in outcomes)}" if any(s == "SKIPPED" for _, s in outcomes)
              else ""]
    counts = [c for c in counts if c]
    if bad:
        lines.append(f"FAILED ({', '.join(counts)})")
    else:
        lines.append("OK" + (f" ({', '.join(counts)})" if counts else "") if n else "NO TESTS RAN")
    return "", "\n".join([*lines, *epilogue]) + "\n", 1 if bad or not n else 0
