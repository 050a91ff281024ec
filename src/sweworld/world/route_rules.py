"""Routing rules: which simple commands run for real and which ones SWT predicts.

The rules are data (the tables below) and one function, :func:`classify`, that reads a simple
command's words (after quote removal, assignments left out) and answers ``(simulate, reason)``.
The reason names the rule: ``"utility: grep"``, ``"git: diff"``, ``"interpreter: python"``,
``"timeout > interpreter: python"`` (a wrapper looked through), ``"unknown program: foo"``.

Order of the rules:

1. no words (only assignments): real, ``assignment``; a function defined in the same command: real
   (its body is routed where it is defined);
2. a program word that is not a literal (``$PY x.py``, ``$(which python)``): simulated;
3. a program given by a path: a relative path (``./manage.py``, ``scripts/run.sh``) runs a file of
   the repository: simulated (``script``); an absolute path is judged by its basename;
4. wrappers (:data:`WRAPPERS`: timeout, env, nohup, time, nice, stdbuf, xargs, command, exec,
   sudo, ...): their options and fixed arguments are skipped and the wrapped program is judged;
   a wrapper without a program acts as its default (xargs: echo, env: printenv, others: true);
5. shells (bash, sh, zsh, dash): ``-c STRING`` is routed as a command of its own (real only if all
   of it is real); a script file or stdin: simulated;
6. programs with subcommands (:data:`SUBCOMMANDS`): git reads and workspace edits are real, git
   subcommands outside the table (and ``git bisect run``) simulated; pip/uv/conda/poetry always
   simulated, the reason says install, environment query or execution;
7. ``find`` with ``-exec``/``-execdir``/``-ok``/``-okdir``: the executed command is judged;
8. environment queries (:data:`ENVIRONMENT_QUERIES`: which, type, whereis, printenv, ...): simulated,
   the sim episode has no environment to ask;
9. :data:`REAL` utilities: real; :data:`EXECUTION` programs and every other program: simulated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from sweworld.shell.words import is_assignment


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


REAL: dict[str, frozenset[str]] = {
    "navigation": _names(
        "cd pwd pushd popd dirs ls tree find fd realpath readlink basename dirname stat file du df"
    ),
    "reading": _names(
        "cat head tail less more nl tac rev od hexdump xxd strings wc md5sum sha1sum sha256sum cmp diff comm"
    ),
    "text": _names(
        "grep egrep fgrep rg ag sed awk gawk mawk sort uniq cut tr paste join column fold fmt "
        "expand unexpand tee iconv base64 jq"
    ),
    "files": _names(
        "mkdir rmdir rm mv cp touch ln chmod truncate split patch tar gzip gunzip zcat unzip mktemp"
    ),
    "builtin": _names(
        "echo printf true false test [ : export unset set shopt alias unalias read local declare "
        "typeset readonly let exit return break continue shift wait trap umask ulimit sleep date "
        "clear history kill cal whoami id uname hostname nproc"
    ),
}

EXECUTION: dict[str, frozenset[str]] = {
    "interpreter": _names("python python3 pypy pypy3 ipython node ruby perl php java lua"),
    "test runner": _names("pytest py.test tox nox coverage unittest nosetests trial"),
    "build": _names("make cmake ninja meson gcc cc g++ clang javac go cargo mvn gradle"),
    "installer": _names("pip pip3 uv conda mamba poetry pipenv pdm hatch npm npx yarn"),
    "framework": _names("django-admin flask sphinx-build mypy pylint flake8 black ruff"),
}
_PYTHON_VERSIONED = re.compile(r"(python|pypy|pip)\d+(\.\d+)*")

ENVIRONMENT_QUERIES = _names("which type whereis hash printenv")
SHELLS = _names("bash sh zsh dash ksh")
SOURCE = frozenset({"source", "."})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True)
class Wrapper:
    """A program that runs another one: skip options (``with_arg`` take a value), ``fixed``
    positional arguments and, for env, NAME=VALUE words; ``default`` when no program follows."""

    with_arg: frozenset[str] = frozenset()
    fixed: int = 0
    assignments: bool = False
    default: str = "true"
    query_options: frozenset[str] = frozenset()  # options that make it an environment query

    def program(self, args: list[str]) -> list[str] | None:
        """The wrapped command's words, [default] if none, None for an environment query."""
        k, fixed = 0, self.fixed
        while k < len(args):
            word = args[k]
            if word in self.query_options:
                return None
            if word == "--":
                k += 1
                break
            if word.startswith("-") and len(word) > 1:
                k += 2 if word in self.with_arg else 1
            elif self.assignments and is_assignment(word):
                k += 1
            elif fixed:
                fixed, k = fixed - 1, k + 1
            else:
                break
        return args[k + fixed :] or [self.default]


WRAPPERS: dict[str, Wrapper] = {
    "timeout": Wrapper(_names("-s -k --signal --kill-after"), fixed=1),
    "env": Wrapper(_names("-u --unset -C --chdir -S --split-string"), assignments=True, default="printenv"),
    "nohup": Wrapper(),
    "time": Wrapper(_names("-o -f --output --format")),
    "nice": Wrapper(_names("-n --adjustment")),
    "ionice": Wrapper(_names("-c -n -p")),
    "stdbuf": Wrapper(_names("-i -o -e")),
    "unbuffer": Wrapper(),
    "exec": Wrapper(_names("-a")),
    "builtin": Wrapper(),
    "command": Wrapper(query_options=_names("-v -V")),
    "sudo": Wrapper(_names("-u -g -C -D")),
    "xargs": Wrapper(
        _names("-I -i -n -P -d -L -l -s -E -e -a --max-args --max-procs --delimiter --arg-file"),
        default="echo",
    ),
}


@dataclass(frozen=True)
class Subcommands:
    """A program judged by its first non-option word. ``real``: subcommands that run for real
    (None: none does); ``sim_args``: a subcommand followed by one of these words is simulated;
    ``reasons``: the reason for simulated subcommands (default: execution)."""

    with_arg: frozenset[str] = frozenset()
    real: frozenset[str] | None = None
    sim_args: tuple[tuple[str, frozenset[str]], ...] = ()
    reasons: tuple[tuple[frozenset[str], str], ...] = ()

    def judge(self, args: list[str]) -> tuple[bool, str]:
        k = 0
        while k < len(args) and args[k].startswith("-"):
            k += 2 if args[k] in self.with_arg else 1
        sub = args[k] if k < len(args) else ""
        rest = set(args[k + 1 :])
        real = self.real is not None and (sub in self.real or not sub)
        if real and not rest & dict(self.sim_args).get(sub, frozenset()):
            return False, sub or "no subcommand"
        reason = next((r for subs, r in self.reasons if sub in subs), "execution")
        return True, f"{sub or '-'} ({reason})"


_PACKAGE_REASONS = (
    (_names("install uninstall sync add remove update upgrade download wheel lock create"), "install"),
    (_names("list show freeze info check config env envs --version -V"), "environment query"),
)
_PACKAGER = Subcommands(reasons=_PACKAGE_REASONS)
SUBCOMMANDS: dict[str, Subcommands] = {
    "git": Subcommands(
        _names("-C -c --git-dir --work-tree --namespace"),
        real=_names(
            "status diff log show grep blame annotate shortlog describe rev-parse rev-list ls-files "
            "ls-tree cat-file show-ref diff-index diff-files diff-tree merge-base name-rev reflog "
            "whatchanged branch tag config remote help version add rm mv restore checkout switch "
            "reset stash apply am commit cherry-pick revert clean format-patch init bisect notes"
        ),
        sim_args=(("bisect", frozenset({"run"})),),
    ),
    **{name: _PACKAGER for name in _names("pip pip3 uv conda mamba poetry pipenv pdm hatch")},
}

Verdict = tuple[bool, str]
ShellJudge = Callable[[str], Verdict]


def _table_category(table: dict[str, frozenset[str]], name: str) -> str | None:
    return next((cat for cat, names in table.items() if name in names), None)


def classify(words: list[str], functions: frozenset[str], shell: ShellJudge) -> Verdict:
    """``(simulate, reason)`` for a simple command's words. ``shell`` judges a ``bash -c`` string."""
    if not words:
        return False, "assignment"
    program, args = words[0], words[1:]
    if "$" in program or "`" in program:
        return True, f"dynamic program: {program}"
    if "/" in program:
        if not program.startswith("/"):
            return True, f"script: {program}"
        program = os.path.basename(program)
    if program in functions:
        return False, f"function: {program}"
    return _classify_name(program, args, functions, shell)


def _classify_name(name: str, args: list[str], functions: frozenset[str], shell: ShellJudge) -> Verdict:
    if name in WRAPPERS:
        inner = WRAPPERS[name].program(args)
        if inner is None:
            return True, f"environment query: {name}"
        simulate, reason = classify(inner, functions, shell)
        return simulate, f"{name} > {reason}"
    if name in SHELLS:
        return _shell(name, args, shell)
    if name in SOURCE:
        return True, f"script: {name}"
    if name in SUBCOMMANDS:
        simulate, reason = SUBCOMMANDS[name].judge(args)
        return simulate, f"{name}: {reason}"
    if name == "find":
        return _find(args, functions, shell)
    if name in ENVIRONMENT_QUERIES:
        return True, f"environment query: {name}"
    category = _table_category(REAL, name)
    if category:
        return False, f"{category}: {name}"
    category = _table_category(EXECUTION, name)
    if category or _PYTHON_VERSIONED.fullmatch(name):
        return True, f"{category or 'interpreter'}: {name}"
    return True, f"unknown program: {name}"


def _shell(name: str, args: list[str], shell: ShellJudge) -> Verdict:
    for k, word in enumerate(args):
        if word == "-c" or (word.startswith("-") and "c" in word[1:] and not word.startswith("--")):
            if k + 1 < len(args):
                simulate, reason = shell(args[k + 1])
                return simulate, f"{name} -c > {reason}"
        elif not word.startswith("-"):
            return True, f"script: {name} {word}"
    return True, f"script: {name} (stdin)"


def _find(args: list[str], functions: frozenset[str], shell: ShellJudge) -> Verdict:
    for k, word in enumerate(args):
        if word in FIND_EXEC:
            inner = args[k + 1 :]
            end = next((j for j, w in enumerate(inner) if w in (";", "+")), len(inner))
            simulate, reason = classify(inner[:end], functions, shell)
            if simulate:
                return True, f"find {word} > {reason}"
    return False, "navigation: find"
