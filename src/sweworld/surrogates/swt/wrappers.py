"""tox and nox around a test runner: reading ``tox -e py -- ARGS`` / ``nox -s tests -- ARGS``, writing
the wrapper's own lines around the runner's output.

``parse_wrapper(words)`` reads the wrapper's command line into a ``Wrapper`` (tool, environment or
session, the arguments after ``--``) and the command it runs: ``pytest`` with those arguments, the
``commands = pytest {posargs}`` that most projects' tox.ini and noxfile run. ``wrap(...)`` writes
what tox 4 (``py: commands[0]> pytest ARGS`` ... ``py: exit 1 (T seconds) /testbed> pytest ARGS
pid=N``, ``py: FAIL code 1 (...)``, ``evaluation failed :(`` / ``congratulations :)``, on stdout)
and nox (``nox > Running session tests`` ... ``nox > Session tests failed.``, on stderr) print
around it; the lines before the command (installing, building the package) are the repository's
recorded ones (``learned``: the lines a recorded run of the wrapper printed before its command),
else a plain environment set-up. The exit code is the runner's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)?)?$")
_TOX_VALUE = {"-e", "-c", "-n", "--conf", "--workdir", "--root", "-x", "--override", "--installpkg", "-m",
              "-f"}
_NOX_VALUE = {"-s", "--session", "--sessions", "-e", "-p", "--python", "-f", "--noxfile", "-t", "--tags",
              "-k", "--db", "--default-venv-backend", "-db", "--envdir"}


@dataclass
class Wrapper:
    """A tox environment or a nox session that runs a test command."""

    tool: str  # tox | nox
    env: str
    posargs: list[str] = field(default_factory=list)
    exact: bool = True


def parse_wrapper(words: Sequence[str]) -> tuple[Wrapper, list[str]] | None:
    """(the wrapper, the command it runs) of ``tox ...`` / ``nox ...`` / ``python -m tox ...``; None
    for anything else."""
    words = list(words)
    if words and _PYTHON.match(words[0]) and words[1:2] == ["-m"]:
        words = words[2:]
    if not words or words[0].rsplit("/", 1)[-1] not in ("tox", "nox"):
        return None
    tool, args = words[0].rsplit("/", 1)[-1], words[1:]
    posargs: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, posargs = args[:at], args[at + 1:]
    values = _TOX_VALUE if tool == "tox" else _NOX_VALUE
    env, exact, i = "", True, 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in values:
            value = args[i] if i < len(args) else ""
            i += 1
            if arg in ("-e", "-s", "--session", "--sessions"):
                env = value
            else:
                exact = False
        elif tool == "tox" and arg.startswith("-e") and len(arg) > 2:
            env = arg[2:].lstrip("=")
        elif arg in ("run", "r", "-r", "--reuse-existing-virtualenvs", "-R", "--current-env", "-v", "-q"):
            continue
        else:
            exact = False
    if "," in env:
        exact = False
    env = env.split(",", 1)[0] or ("py" if tool == "tox" else "tests")
    return Wrapper(tool, env, posargs, exact), ["pytest", *posargs]


def wrap(wrapper: Wrapper, command: Sequence[str], stdout: str, stderr: str, code: int, *,
         merged: bool = False, learned: Sequence[str] = (), duration: float = 0.0) -> tuple[str, str, int]:
    """The wrapper's (stdout, stderr, exit code) around the runner's ``stdout``/``stderr``/``code``
    (``merged``: one stream, in the order the lines are written)."""
    env = wrapper.env
    if wrapper.tool == "tox":
        shown = " ".join(command)
        before = list(learned) or [f"{env}: install_deps> python -I -m pip install pytest"]
        after = [f"{env}: exit {code} ({duration:.2f} seconds) /testbed> {shown} pid=1"] if code else []
        total = duration + 1.0
        outcome = "OK" if code == 0 else f"FAIL code {code}"
        times = f"{total:.2f}=setup[{total - duration:.2f}]+cmd[{duration:.2f}]"
        after += [f"  {env}: {outcome} ({times} seconds)",
                  f"  {'congratulations :)' if code == 0 else 'evaluation failed :('} ({total:.2f} seconds)"]
        out = "\n".join([*before, f"{env}: commands[0]> {shown}"]) + "\n" + stdout + "\n".join(after) + "\n"
        return (out + stderr, "", code) if merged else (out, stderr, code)
    shown = f"{command[0]} {' '.join(command[1:])}"  # nox joins the program and its arguments with a space
    before = list(learned) or [f"nox > Running session {env}",
                               f"nox > Creating virtual environment (virtualenv) using python in .nox/{env}",
                               "nox > python -m pip install pytest ."]
    head = "\n".join([*before, f"nox > {shown}"]) + "\n"
    tail = "\n".join([f"nox > Command {shown} failed with exit code {code}", f"nox > Session {env} failed."]
                     if code else [f"nox > Session {env} was successful."]) + "\n"
    if merged:
        return head + stdout + stderr + tail, "", code
    return stdout, head + stderr + tail, code


def learned_lines(wrapper: Wrapper, text: str) -> list[str]:
    """The lines a recorded run of ``wrapper`` printed before its test command."""
    lines = text.splitlines()
    mark = f"{wrapper.env}: commands[0]> " if wrapper.tool == "tox" else "nox > pytest"
    end = next((k for k, line in enumerate(lines) if line.startswith(mark)), None)
    return lines[:end] if end else []
