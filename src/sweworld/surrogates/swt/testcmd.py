"""Test commands the embedded SWT renders itself: pytest, unittest, Django's runner, sympy's bin/test.

``parse_test_command(command, workdir)`` reads a command such as ``cd /testbed && python -m pytest
-q tests/x.py::T::t -k 'a and not b' 2>&1 | tail -15`` into a ``TestRun``: the runner, its options
(verbosity, report characters, traceback style, -x, -k), the targets as paths relative to the
repository root, whether stderr joins stdout, and the filters its output is piped through
(``shellfilters``). A tox or nox command (``wrappers``) is the pytest command it runs, its
``wrapper`` set. ``None`` when the command is anything else (more than one program before the
pipe, a runner the model does not know). ``exact`` is False when something was not understood
(an unknown option or filter): the rendering is then less certain.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from sweworld.surrogates.swt.wrappers import Wrapper, parse_wrapper
from sweworld.world.commands import (
    PYTEST,
    PYTEST_VALUE_OPTIONS,
    PYTHON,
    interpreter_arguments,
    simple_commands,
    strip_wrappers,
)

_MERGE = re.compile(r"(?<=\s)(?:2>&1|&>\s*/dev/null|[12]?>\s*/dev/null)(?=[\s|;&]|$)")
_REDIRECT = re.compile(r"^\d?[<>]")
_PREFIX_OK = {"cd", "export", "source", ".", "set"}
_KNOWN_FLAGS = {"-s", "--no-header", "--disable-warnings", "--no-summary", "-l", "--showlocals", "--color=no",
                "--strict-markers", "-ra", "-rA", "-rf", "-rfE", "--capture=no", "-B", "-u"}
_DJANGO = re.compile(r"^(?:\./)?(?:tests/)?runtests\.py$")
_SYMPY = re.compile(r"^(?:\./)?bin/test$")
_SYMPY_VALUE = {"--tb", "--seed", "-t", "--types", "--timeout", "--split", "--rerun"}


@dataclass
class TestRun:
    """One test-runner invocation as the embedded SWT renders it."""

    runner: str  # pytest | unittest | django | sympy | script
    targets: list[str] = field(default_factory=list)
    keyword: str | None = None
    verbosity: int = 0
    reportchars: str = "fE"
    tb: str = "auto"
    exitfirst: bool = False
    merged: bool = False
    filters: list[list[str]] = field(default_factory=list)
    exact: bool = True
    header: bool = True
    """pytest's session header (``--no-header``: none)."""
    cache: bool = True
    """The runner's cache: pytest's plugin (``-p no:cacheprovider``: no ``cachedir:`` line), sympy's
    (``-C``: ``cache: no`` in its header)."""
    parallel: int | None = None
    """Django's ``--parallel N``."""
    wrapper: Wrapper | None = None


TestRun.__test__ = False  # type: ignore[attr-defined]  # not a pytest class when imported


def relative(target: str, cwd: str, workdir: str) -> str:
    """A path or node id (``path::Class::test``) relative to the repository root."""
    path, sep, rest = target.partition("::")
    full = posixpath.normpath(posixpath.join(cwd, path))
    root = workdir.rstrip("/")
    path = "" if full == root else full[len(root) + 1:] if full.startswith(root + "/") else full
    return path + sep + rest


def parse_test_command(command: str, workdir: str = "/testbed") -> TestRun | None:
    """The ``TestRun`` of ``command``, or None when it is not a test command (module docstring)."""
    return _parse(command, workdir, _runner)


def parse_script_command(command: str, workdir: str = "/testbed") -> TestRun | None:
    """``python [options] FILE.py [args]`` (a script of the workspace, e.g. an agent's reproduction
    script) as a ``TestRun`` of runner ``script`` whose one target is FILE relative to the
    repository root (``exact`` False when the script gets arguments); None for anything else."""
    return _parse(command, workdir, _script)


def _script(words: list[str]) -> TestRun | None:
    if not PYTHON.match(words[0]) or _runner(words) is not None:
        return None
    args = interpreter_arguments(words[1:])
    if not args or not args[0].endswith(".py"):
        return None
    return TestRun("script", targets=[args[0]], exact=len(args) == 1)


def _parse(command: str, workdir: str, runner: Callable[[list[str]], TestRun | None]) -> TestRun | None:
    merged = "2>&1" in command
    try:
        segments = simple_commands(_MERGE.sub(" ", command), strict=True)
    except ValueError:
        return None
    cwd, run = workdir, None
    for op, words in segments:
        if run is not None:
            if op not in ("|", "|&"):
                return None
            run.filters.append(words)
            continue
        words = strip_wrappers(words)
        if not words:
            continue
        if words[0] == "cd":
            cwd = posixpath.normpath(posixpath.join(cwd, words[1] if len(words) > 1 else workdir))
        elif words[0] not in _PREFIX_OK:
            run = None if any(_REDIRECT.match(w) for w in words) else runner(words)
            if run is None:
                return None
            run.targets = [relative(t, cwd, workdir) if run.runner in ("pytest", "script") or "/" in t or t.endswith(".py")
                           else t for t in run.targets]
    if run is not None:
        run.merged = merged
    return run


def _runner(words: list[str]) -> TestRun | None:
    wrapped = parse_wrapper(words)
    if wrapped is not None:
        run = _pytest(wrapped[1][1:])
        run.wrapper, run.exact = wrapped[0], run.exact and wrapped[0].exact
        return run
    head, args = words[0], words[1:]
    if _SYMPY.match(head):
        return _sympy(args)
    if PYTHON.match(head):
        args = interpreter_arguments(args)
        if args[:2] in (["-m", "pytest"], ["-m", "py.test"]):
            return _pytest(args[2:])
        if args[:2] == ["-m", "unittest"]:
            return _unittest(args[2:], "unittest")
        if args and _SYMPY.match(args[0]):
            return _sympy(args[1:])
        if args and (_DJANGO.match(args[0]) or args[:2] == ["manage.py", "test"]):
            return _unittest(args[2:] if args[0] == "manage.py" else args[1:], "django")
        return None
    if PYTEST.match(head):
        return _pytest(args)
    if _DJANGO.match(head):
        return _unittest(args, "django")
    return None


def _pytest(args: list[str]) -> TestRun:
    run = TestRun("pytest")
    i = 0
    while i < len(args):
        arg, value = args[i], args[i + 1] if i + 1 < len(args) else ""
        i += 1
        if arg in ("-q", "--quiet") or re.fullmatch(r"-q+", arg):
            run.verbosity -= 1 if arg.startswith("--") else len(arg) - 1
        elif arg in ("-v", "--verbose") or re.fullmatch(r"-v+", arg):
            run.verbosity += 1 if arg.startswith("--") else len(arg) - 1
        elif arg in ("-x", "--exitfirst"):
            run.exitfirst = True
        elif arg.startswith("-r") and len(arg) > 2:
            run.reportchars = _reportchars(arg[2:])
        elif arg.startswith("--tb="):
            run.tb = arg[5:]
        elif arg.startswith("-k") and len(arg) > 2:
            run.keyword = arg[2:]
        elif arg in PYTEST_VALUE_OPTIONS:
            i += 1
            if arg == "-k":
                run.keyword = value
            elif arg == "--tb":
                run.tb = value
            elif arg == "-r":
                run.reportchars = _reportchars(value)
            elif arg == "-p":
                run.cache = run.cache and value != "no:cacheprovider"
            elif arg not in ("-W", "-o", "--override-ini", "--basetemp", "--rootdir", "-c"):
                run.exact = False
        elif arg == "--no-header":
            run.header = False
        elif arg.startswith("-"):
            run.cache = run.cache and arg != "-pno:cacheprovider"
            run.exact = run.exact and (arg in _KNOWN_FLAGS or arg.startswith(("-p", "-W", "--color")))
        else:
            run.targets.append(arg)
    return run


def _reportchars(chars: str) -> str:
    """pytest's ``getreportopt`` (warnings left out: the model predicts none)."""
    out = ""
    for char in chars:
        char = char.lower() if char in "FS" else char
        if char == "a":
            out = "sxXEf"
        elif char == "A":
            out = "PpsxXEf"
        elif char == "N":
            out = ""
        elif char not in out:
            out += char
    return out


class _Args:
    """A cursor over a runner's arguments: each in turn, and the value an option takes (``--opt=v``
    or ``--opt v``)."""

    def __init__(self, args: list[str]):
        self.args, self.at = args, 0

    def __iter__(self):
        while self.at < len(self.args):
            self.at += 1
            yield self.args[self.at - 1]

    def value(self, arg: str, default: str = "") -> str:
        """``arg``'s value: after its ``=``, else the next argument (consumed)."""
        if "=" in arg:
            return arg.partition("=")[2] or default
        self.at += 1
        return self.args[self.at - 1] if self.at <= len(self.args) else default

    def words(self) -> list[str]:
        """The arguments up to the next option (consumed), as argparse's ``nargs='*'`` takes them."""
        taken = []
        while self.at < len(self.args) and not self.args[self.at].startswith("-"):
            taken.append(self.args[self.at])
            self.at += 1
        return taken


def _unittest(args: list[str], runner: str) -> TestRun:
    run = TestRun(runner)
    cursor = _Args(args)
    for arg in cursor:
        if arg in ("-v", "--verbose"):
            run.verbosity = 2
        elif arg in ("-q", "--quiet"):
            run.verbosity = 0
        elif arg.startswith("--verbosity"):
            level = cursor.value(arg, "1")
            run.verbosity = int(level) if level.isdigit() else 1
        elif arg in ("-f", "--failfast"):
            run.exitfirst = True
        elif arg.startswith("--parallel"):
            level = cursor.value(arg)
            run.parallel = int(level) if level.isdigit() else None
        elif arg.startswith("--settings"):
            cursor.value(arg)
        elif arg == "discover":
            continue
        elif arg.startswith("-"):
            run.exact = False
        else:
            run.targets.append(arg)
    if runner == "unittest":
        run.verbosity = max(run.verbosity, 1) if run.verbosity else 1
    return run


def _sympy(args: list[str]) -> TestRun:
    """``bin/test [options] [paths]`` (``-k`` takes the words up to the next option, as argparse's
    ``nargs='*'`` does; ``--no-subprocess``, ``--no-colors`` and the like change nothing it prints)."""
    run = TestRun("sympy", tb="short")
    cursor = _Args(args)
    for arg in cursor:
        if arg in ("-v", "--verbose"):
            run.verbosity = 1
        elif arg == "-k":
            run.keyword = " or ".join(cursor.words()) or None
        elif arg in _SYMPY_VALUE:
            value = cursor.value(arg, run.tb)
            if arg == "--tb":
                run.tb = value
        elif arg.startswith("--tb="):
            run.tb = arg[5:]
        elif arg in ("-C", "--no-cache"):
            run.cache = False
        elif arg in ("--no-subprocess", "--no-colors", "--force-colors", "-E",
                     "--enhance-asserts", "--random", "--slow", "-s", "--use-sympy-runner"):
            continue
        elif arg.startswith("-"):
            run.exact = False
        else:
            run.targets.append(arg)
    return run


def keyword_matches(expression: str, test_id: str) -> bool:
    """pytest's ``-k``: ``and``/``or``/``not``/parentheses over case-insensitive substrings of the
    names of the test, its class and its file; an expression it cannot read matches everything."""
    names = [n.lower() for n in re.split(r"::|/", test_id) if n]
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)

    def atom(at: int) -> tuple[bool, int]:
        token = tokens[at] if at < len(tokens) else ""
        if token == "not":
            value, at = atom(at + 1)
            return not value, at
        if token == "(":
            value, at = any_of(at + 1)
            return value, at + 1
        return any(token.lower() in n for n in names), at + 1

    def chain(op: str, lower: Callable[[int], tuple[bool, int]]) -> Callable[[int], tuple[bool, int]]:
        def parse(at: int) -> tuple[bool, int]:
            value, at = lower(at)
            while at < len(tokens) and tokens[at] == op:
                other, at = lower(at + 1)
                value = (value and other) if op == "and" else (value or other)
            return value, at
        return parse

    any_of = chain("or", chain("and", atom))

    try:
        return any_of(0)[0] if tokens else True
    except (IndexError, RecursionError):
        return True
