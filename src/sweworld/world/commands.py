"""What code a shell command executes: the files SWT must see to predict its output.

``executed_code(command)`` splits the command into simple commands (on ``&&``, ``||``, ``;``, ``|``
and newlines, with shell quoting: :func:`sweworld.shell.lexer.simple_commands`), follows ``cd DIR``
so that relative paths resolve where the command runs, drops redirections (``2>&1``, ``> out``) and
wrappers (``VAR=value`` and ``VAR+=value``, ``env``, ``timeout N``, ``time``, ``nice``, ``xvfb-run``,
``coverage run``) and reads:

- ``python[X.Y] FILE ...`` -> FILE; ``python -c CODE`` -> CODE itself (inline);
- ``python -m pytest ARGS`` and ``pytest ARGS`` / ``py.test ARGS`` -> the path arguments (node ids
  cut at ``::``, options and their values skipped);
- ``python -m MODULE`` (not pytest) -> ``MODULE.py`` or ``MODULE/__main__.py`` (whichever exists);
- a heredoc fed to python (``python - <<EOF``) is part of the command text itself: nothing to read
  (the lexer never reads a here-document's body as commands).

This is a reader of intent, not a shell: the router decides WHETHER a command goes to SWT; this
only lists what SWT should be shown. Unparseable quoting falls back to whitespace splitting.
"""

from __future__ import annotations

import posixpath
import re

from pydantic import BaseModel, Field

from sweworld.shell.lexer import simple_commands
from sweworld.shell.words import is_assignment, without_redirections

PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)?)?$")
PYTEST = re.compile(r"^(?:.*/)?(?:py\.test|pytest(?:-\d+(?:\.\d+)?)?)$")
_WRAPPERS = {"env", "time", "nice", "nohup", "xvfb-run", "exec", "command", "stdbuf"}
_WRAPPERS_WITH_VALUE = {"timeout"}
# pytest options that take their value as the next word (``-k expr``); ``--opt=value`` needs nothing
PYTEST_VALUE_OPTIONS = {
    "-k", "-m", "-p", "-c", "-o", "-W", "-n", "--deselect", "--ignore", "--ignore-glob", "--rootdir",
    "--junitxml", "--junit-xml", "--maxfail", "--tb", "--durations", "--cov", "--cov-report",
    "--log-level", "--basetemp", "--timeout", "--confcutdir", "--import-mode", "--capture",
    "--override-ini", "--log-cli-level", "--dist", "--numprocesses", "-r", "--randomly-seed",
}
_PYTHON_VALUE_OPTIONS = {"-W", "-X", "-Q"}


class ExecutedCode(BaseModel):
    """The code a command runs: files to read (paths as the command names them, resolved against
    the directories it ``cd``s into) and inline code (``python -c``)."""

    files: list[str] = Field(default_factory=list, description="Paths, deduplicated, in command order.")
    inline: list[str] = Field(default_factory=list, description="Code passed with python -c.")


def split_simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command of ``command`` (operators dropped)."""
    return [words for _, words in simple_commands(command)]


def interpreter_arguments(args: list[str]) -> list[str]:
    """A python interpreter's arguments from ``-m``/``-c``/``-``/the script on (its own options,
    ``-W ignore``, ``-X dev``, ``-u`` ..., dropped)."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] not in ("-m", "-c", "-"):
        i += 2 if args[i] in _PYTHON_VALUE_OPTIONS else 1
    return args[i:]


def strip_wrappers(words: list[str]) -> list[str]:
    """The words from the program that runs on: assignments, wrappers and their options dropped
    (``coverage run`` becomes ``python``)."""
    i = 0
    while i < len(words):
        word = words[i]
        if is_assignment(word) or word in _WRAPPERS:
            i += 1
        elif word in _WRAPPERS_WITH_VALUE:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += 1  # the duration
        elif word == "coverage" and i + 1 < len(words) and words[i + 1] == "run":
            i += 2
            while i < len(words) and words[i].startswith("-") and words[i] != "-m":
                i += 1
            return ["python", *words[i:]]
        else:
            break
    return words[i:]


def _pytest_paths(args: list[str]) -> list[str]:
    paths: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in PYTEST_VALUE_OPTIONS
        else:
            path = arg.split("::", 1)[0]
            if path and not path.startswith("<"):
                paths.append(path)
    return paths


def _python_targets(args: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(files, inline code, modules) of the arguments of a python interpreter."""
    args = interpreter_arguments(args)
    if not args or args[0] == "-":  # "-" alone is stdin
        return [], [], []
    if args[0] == "-c":
        return [], args[1:2], []
    if args[0] == "-m":
        module = args[1] if len(args) > 1 else ""
        if module in ("pytest", "py.test"):
            return _pytest_paths(args[2:]), [], []
        return [], [], [module] if module else []
    return [args[0]], [], []


def executed_code(command: str) -> ExecutedCode:
    """See the module docstring. Module names come back as candidate files
    (``pkg/mod.py`` then ``pkg/mod/__main__.py``); the caller keeps those that exist."""
    cwd = ""
    files: list[str] = []
    inline: list[str] = []
    for words in split_simple_commands(command):
        words = strip_wrappers(without_redirections(words))
        if not words:
            continue
        head, args = words[0], words[1:]
        if head == "cd":
            target = args[0] if args else ""
            cwd = target if target.startswith("/") else posixpath.normpath(posixpath.join(cwd, target))
            continue
        found: list[str] = []
        if PYTHON.match(head):
            found, code, modules = _python_targets(args)
            inline.extend(code)
            for module in modules:
                base = module.replace(".", "/")
                found += [f"{base}.py", f"{base}/__main__.py"]
        elif PYTEST.match(head):
            found = _pytest_paths(args)
        for path in found:
            files.append(path if path.startswith("/") or not cwd else posixpath.join(cwd, path))
    return ExecutedCode(files=list(dict.fromkeys(posixpath.normpath(f) for f in files)), inline=inline)
