"""Why a validation found no FAIL_TO_PASS, read from the test runs' logs, and which tests a test
patch touches (the collection rule of ``runs.validate``).

``run_cause(output, exit_code, parsed)`` names what kept a run of the tests from giving per-test
results, or None when they ran: the tests needed the network, an import failed (the module named),
test files failed to collect, nothing was collected (pytest's exit 5, "no tests ran"), the runner
refused its arguments, every test errored, or the command exited with a code no test runner gives
after running tests. Each cause is a short text that groups well (the summary counts drops by it).

``touched_tests(test_patch)`` reads the test patch's hunks (``unidiff``): per file, the names of the
test functions and classes whose lines it adds, removes or changes (a decorator counts for the
function it decorates); ``touches(test_id, touched)`` says whether a pytest id
(``path::Class::test[param]``) or a unittest id (``test (module.Class)``) is one of them.
"""

from __future__ import annotations

import re

import unidiff

NETWORK = re.compile(r"Network is unreachable|Temporary failure in name resolution|Name or service not known|"
                     r"nodename nor servname provided|Could not resolve host|No address associated with hostname|"
                     r"Failed to establish a new connection|getaddrinfo failed")
IMPORT = re.compile(r"(ModuleNotFoundError: No module named '[^']+'|ImportError: cannot import name '[^']+'"
                    r"(?: from '[^']+')?|ImportError: [^\n(]{1,120})")
COLLECTION = re.compile(r"^(?:_+ )?ERROR collecting (\S+)|errors? during collection", re.MULTILINE)
NO_TESTS = re.compile(r"no tests ran|collected 0 items|^NO TESTS RAN|Ran 0 tests", re.MULTILINE)
USAGE = re.compile(r"^\S*: error: (?:unrecognized arguments|argument|the following arguments).*$", re.MULTILINE)
NO_TESTS_COLLECTED = 5
USAGE_ERROR = 4


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(0).strip() if match else None


def run_cause(output: str, exit_code: int | None, parsed: dict[str, str]) -> str | None:
    """Why the run gave no per-test results (see the module docstring), or None when tests ran."""
    network = _first(NETWORK, output)
    failed = not parsed or all(s in ("ERROR", "FAILED") for s in parsed.values())
    if network and failed:
        return f"tests need the network ({network})"
    imported = _first(IMPORT, output)
    collecting = COLLECTION.search(output)
    if imported and (collecting or not parsed):
        return f"tests do not import ({imported})"
    if collecting:
        return "test files fail to collect"
    if exit_code == NO_TESTS_COLLECTED or (not parsed and NO_TESTS.search(output)):
        return "no tests collected"
    if exit_code == USAGE_ERROR or USAGE.search(output):
        usage = _first(USAGE, output)
        return "the test command is refused" + (f" ({usage[:120]})" if usage else f" (exit {exit_code})")
    if parsed and all(s == "ERROR" for s in parsed.values()):
        return "every test errors"
    if not parsed:
        return "the test run printed no results" + (f" (exit {exit_code})" if exit_code is not None else
                                                    " (no exit code: killed or cut short)")
    return None


_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"^(\s*)class\s+(\w+)")


class _Scope:
    """The function and class a line of a Python hunk is in, as far as the hunk shows."""

    def __init__(self, header: str):
        self.cls: str | None = None
        self.fn: str | None = None
        self.indent = -1
        """The indentation of ``fn``'s ``def`` line."""
        self.decorated = False
        self.line(header, changed=False)

    def _body(self, text: str) -> str | None:
        """The scope of a line that defines nothing: a code line at or left of the function's
        ``def`` ends the function (and at column 0 the class)."""
        indent = len(text) - len(text.lstrip())
        if text.strip() and not text.lstrip().startswith(("@", "#")):
            if indent <= self.indent:
                self.fn, self.indent = None, -1
            if indent == 0:
                self.cls = None
        return self.fn or self.cls

    def line(self, text: str, *, changed: bool) -> str | None:
        """Read one line; the name it changes (its function, else its class), or None."""
        defined, klass = _DEF.match(text), _CLASS.match(text)
        if klass:
            self.cls = klass.group(2) if not klass.group(1) else self.cls or klass.group(2)
            self.fn, self.indent = None, -1
            name = klass.group(2)
        elif defined:
            if not defined.group(1):
                self.cls = None
            self.fn = name = defined.group(2)
            self.indent = len(defined.group(1))
        else:
            name = self._body(text)
        if text.lstrip().startswith("@"):
            self.decorated = self.decorated or changed
            return None
        touched = (changed and bool(text.strip())) or ((defined or klass) and self.decorated)
        self.decorated = False
        return name if touched else None


def _path(pf: unidiff.PatchedFile) -> str:
    name = pf.target_file if pf.target_file != "/dev/null" else pf.source_file
    return name[2:] if name.startswith(("a/", "b/")) else name


OTHER_TEST = re.compile(r"\b(?:func|fn)\s+(?:\([^)]*\)\s*)?(\w+)|\b(?:it|test)\s*\(\s*(['\"`])(.{4,}?)\2")
"""A test of another language on a line: Go's ``func TestX(``, Rust's ``fn name(``, a JavaScript
``it('does x', ...)`` / ``test("does x", ...)`` (its description)."""


def _other_names(pf: unidiff.PatchedFile) -> set[str]:
    """The tests of a Go, Rust or JavaScript file that a patch adds or changes: those named on a changed
    line or in a hunk's header (git's function context: the enclosing ``func``)."""
    names: set[str] = set()
    for hunk in pf:
        lines = [hunk.section_header or "", *(ln.value for ln in hunk if ln.is_added or ln.is_removed)]
        for match in (m for text in lines for m in OTHER_TEST.finditer(text)):
            names.add(match.group(1) or match.group(3))
    return names


def touched_tests(test_patch: str) -> dict[str, set[str]]:
    """Per file of ``test_patch``, the functions and classes it changes (see the module docstring)."""
    out: dict[str, set[str]] = {}
    try:
        files = unidiff.PatchSet(test_patch)
    except unidiff.UnidiffParseError:
        return out
    for pf in files:
        names = out.setdefault(_path(pf), set())
        if not _path(pf).endswith(".py"):
            names |= _other_names(pf)
            continue
        for hunk in pf:
            scope = _Scope(hunk.section_header or "")
            for line in hunk:
                name = scope.line(line.value.rstrip("\n"), changed=line.is_added or line.is_removed)
                if name:
                    names.add(name)
    return out


_UNITTEST_ID = re.compile(r"^(\w+) \(([\w.]+)\)")


def touches(test_id: str, touched: dict[str, set[str]]) -> bool:
    """Whether the test ``test_id`` is one the test patch adds or changes: a pytest id
    (``path.py::Class::test[param]``), a unittest id (``test (module.Class)``), a Rust id
    (``tests::module::name``: its last part), a Go id (``TestX/sub``: the function) or a bare name, or
    a JavaScript test whose description the patch's ``it``/``test`` names."""
    found = set().union(*touched.values()) if touched else set()
    if "::" in test_id and test_id.split("::", 1)[0].endswith(".py"):
        path, *parts = test_id.split("::")
        names = {re.sub(r"\[.*$", "", p) for p in parts}
        return bool(names & touched.get(path, set()))
    match = _UNITTEST_ID.match(test_id)
    if match:
        return bool({match.group(1), match.group(2).rsplit(".", 1)[-1]} & found)
    head = test_id.rsplit("::", 1)[-1] if "::" in test_id else test_id.split("/", 1)[0]
    return head in found or any(" " in name and name in test_id for name in found)
