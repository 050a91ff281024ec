"""SWE-ReX's bash sessions over one sweworld episode, and its syntax check (``bash -n``).

A sweworld episode has one persistent shell (``Executor.run``: cwd and exports persist) and, on the
real sandbox, a stateless ``exec`` (``protocols.ExecCapable``). Named swerex sessions map onto them:

- ``EpisodeShell``: the first session created (SWE-agent's ``default``) *is* the episode's shell:
  each command goes to ``Executor.run`` unchanged, exactly as sweworld's own agents run it;
- ``WrappedShell``: every further session keeps its own cwd and exported variables on the host and
  runs each command wrapped in a subshell that restores them first and writes them back after
  (``builtin pwd`` and ``builtin export -p`` into a state file), through ``exec`` where the episode has
  one (a timeout there kills that command alone), else through the episode's shell (sim, hybrid).

Before a command runs, its syntax is checked as swerex's local runtime does (``bash -n``; a refusal
is ``BashIncorrectSyntaxError`` and nothing runs), in the server's process: ``bash -n`` parses and
runs nothing (and a sim episode would predict it rather than run it). A command made of plain words,
quotes without expansions, pipes, ``&&``/``||``/``;`` and simple redirections is valid bash whatever
its words are; ``plainly_valid`` recognises exactly such commands (never one bash refuses: the tests
compare it with ``bash -n``), and they skip the check.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from swerex.exceptions import BashIncorrectSyntaxError

from sweworld.protocols import ExecCapable

if TYPE_CHECKING:
    from sweworld.executor import Executor
    from sweworld.types import ExecResult

PS1 = "SHELLPS1PREFIX"
"""swerex's prompt: the ``expect_string`` of a command that ran to its end."""
CHECK_TIMEOUT = 30.0
STATE_PREFIX = "/tmp/.sweworld-rex-"
"""Where a wrapped session writes its cwd and exports after each command (one file per session)."""

_SPACE = re.compile(r"[ \t]+")
_WORD = re.compile(r"""(?:[A-Za-z0-9_./:=,+%@^~*?-]|'[^'\n]*'|"[^"\\$`!\n]*")+""")
_REDIRECT = re.compile(r"&>>|&>|[0-9]?(?:>>|>&|<&|>(?![|(])|<(?![<(>]))")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RESERVED = frozenset(["if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case",
                       "esac", "function", "select", "time", "coproc", "{", "}", "!", "[[", "]]"])
_UNTERMINATED = re.compile(r"here-document at line \d+ delimited by end-of-file \(wanted `([^'\n]*)'\)")


def plainly_valid(command: str) -> bool:
    """True when ``command`` is certainly valid bash (see the module docstring); False: ask bash."""
    pos, end = 0, len(command)
    in_command = need_command = named = False  # words seen; after | && ||; the command word seen
    while pos < end:
        if (space := _SPACE.match(command, pos)) is not None:
            pos = space.end()
            continue
        two, char = command[pos:pos + 2], command[pos]
        if two in ("&&", "||") or (char == "|" and two != "|&"):
            if not in_command:
                return False
            in_command, need_command, named = False, True, False
            pos += len(two) if two in ("&&", "||") else 1
        elif (char in ";&" and two not in (";;", ";&", "&>")) or char == "\n":
            if char == "\n" and need_command:
                pos += 1
                continue
            if char != "\n" and not in_command:
                return False
            in_command, named = False, False
            pos += 1
        elif (redirect := _REDIRECT.match(command, pos)) is not None:
            pos = redirect.end()
            if (space := _SPACE.match(command, pos)) is not None:
                pos = space.end()
            target = _WORD.match(command, pos)
            if target is None or (target.group().isdigit() and command[target.end():target.end() + 1] in ("<", ">")):
                return False  # digits just before < or > are bash's next redirection (2> 2>&1), not a word
            pos, in_command, need_command = target.end(), True, False
        elif (word := _WORD.match(command, pos)) is not None:
            text = word.group()
            if not named and not _ASSIGNMENT.match(text):
                if text in _RESERVED:
                    return False
                named = True
            pos, in_command, need_command = word.end(), True, False
        else:
            return False
    return not need_command


def _host_bash() -> str:
    return shutil.which("bash") or "/bin/bash"


class _Checker:
    """``bash -n`` processes started ahead of need, one at a time: a check writes the command to one
    already waiting on its stdin and waits for its verdict; the next one starts in the background."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: subprocess.Popen | None = None
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sweworld-rex-bash-n")

    @staticmethod
    def _start() -> subprocess.Popen:
        return subprocess.Popen(["bash", "--norc", "--noprofile", "-n"], executable=_host_bash(), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={})

    def _refill(self) -> None:
        process = self._start()
        with self._lock:
            if self._ready is None:
                self._ready = process
                return
        process.kill()
        process.wait()

    def check(self, command: str) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) of ``bash -n`` on ``command``."""
        with self._lock:
            process, self._ready = self._ready, None
        if process is None or process.poll() is not None:
            process = self._start()
        self._spawner.submit(self._refill)
        out, err = process.communicate((command + "\n").encode(), timeout=CHECK_TIMEOUT)
        return process.returncode, out.decode(errors="backslashreplace"), err.decode(errors="backslashreplace")


_CHECKER: list[_Checker] = []
_CHECKER_LOCK = threading.Lock()


def _checker() -> _Checker:
    with _CHECKER_LOCK:
        if not _CHECKER:
            _CHECKER.append(_Checker())
        return _CHECKER[0]


def check_syntax(command: str) -> str:
    """swerex's ``_check_bash_command``: ``BashIncorrectSyntaxError`` (its message and ``extra_info``)
    when ``bash -n`` refuses ``command``; else bash's warnings (an unterminated here-document).

    ``bash -n`` reads the command and runs nothing of it (no expansion, no substitution), so it runs
    here, in the server's process, as swerex's runtime runs it in its own (with the bash binary the
    sandbox mounts), from a ``bash -n`` started ahead of need (``_Checker``)."""
    if plainly_valid(command):
        return ""
    code, stdout, stderr = _checker().check(command)
    if code == 0:
        return stderr
    message = (f"Error (exit code {code}) while checking bash command \n{command!r}\n"
               f"---- Stderr ----\n{stderr}\n---- Stdout ----\n{stdout}")
    raise BashIncorrectSyntaxError(message, extra_info={"bash_stdout": stdout, "bash_stderr": stderr})


def closers(warnings: str) -> str:
    """The delimiter lines of the here-documents ``bash -n`` found unterminated: bash ends them at the
    end of the input; a command wrapped in more text needs them written out."""
    return "".join(f"\n{wanted}" for wanted in _UNTERMINATED.findall(warnings))


#: ``export -p`` lines: ``declare -x NAME``, ``declare -x NAME="..."`` or ``declare -x NAME=$'...'``.
_EXPORT = re.compile(r"""^declare -([A-Za-z-]+) ([A-Za-z_][A-Za-z0-9_]*)(?:=("(?:[^"\\]|\\.)*"|\$'(?:[^'\\]|\\.)*'))?$""",
                     re.M | re.S)
_SHELL_OWN = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})


def parse_exports(text: str) -> dict[str, str | None]:
    """``export -p``'s output: name -> the value as bash quoted it (valid bash again), None for a name
    exported without a value. Read-only variables and the shell's own (``PWD``, ``SHLVL``...) are left out."""
    return {m[2]: m[3] for m in _EXPORT.finditer(text) if "r" not in m[1] and m[2] not in _SHELL_OWN}


class Session:
    """One named swerex bash session of an episode."""

    def __init__(self, name: str, executor: Executor):
        self.name, self.executor = name, executor
        self.pending = ""
        """The output of the last command that timed out (the sandbox killed it): the next interrupt returns it."""
        self.busy = threading.Lock()

    def run(self, command: str, timeout: float) -> ExecResult:
        raise NotImplementedError

    def start(self, startup_source: list[str], timeout: float) -> ExecResult | None:
        """Source the startup files (those that exist), as swerex's ``BashSession.start`` does."""
        if not startup_source:
            return None
        lines = [f"[ -f {shlex.quote(path)} ] && builtin source {shlex.quote(path)}" for path in startup_source]
        return self.run("\n".join([*lines, ":"]), timeout)


class EpisodeShell(Session):
    """The episode's own persistent shell."""

    def run(self, command: str, timeout: float) -> ExecResult:
        return self.executor.run(command, timeout=timeout)


class WrappedShell(Session):
    """A further session: its cwd and exports live here and are restored around each command."""

    def __init__(self, name: str, executor: Executor):
        super().__init__(name, executor)
        self.state = f"{STATE_PREFIX}{uuid.uuid4().hex}"
        self.cwd = executor.workdir
        self.base: dict[str, str | None] | None = None
        self.exports: dict[str, str | None] = {}
        self.unset: list[str] = []

    def _wrap(self, command: str) -> str:
        lines = [f"( builtin cd -- {shlex.quote(self.cwd)} 2>/dev/null"]
        lines += [f"builtin unset -v {name}" for name in self.unset]
        lines += [f"builtin export {name}" + ("" if value is None else f"={value}")
                  for name, value in self.exports.items()]
        # two newlines after the command: a trailing backslash continues onto an empty line
        lines += [command, "", "__sw_rc=$?",
                  f"{{ builtin pwd; builtin export -p; }} >{shlex.quote(self.state)} 2>/dev/null",
                  'builtin exit "$__sw_rc" )']
        return "\n".join(lines)

    def run(self, command: str, timeout: float) -> ExecResult:
        script = self._wrap(command)
        if isinstance(self.executor, ExecCapable):
            result = self.executor.exec(script, timeout=timeout)
        else:
            result = self.executor.run(script, timeout=timeout)
        self._load()
        return result

    def _load(self) -> None:
        try:
            text = self.executor.read_file(self.state)
        except FileNotFoundError:  # the command left the subshell (exit, exec) or was killed
            return
        cwd, _, exports = text.partition("\n")
        self.cwd = cwd.strip() or self.cwd
        current = parse_exports(exports)
        if self.base is None:
            self.base = current
        self.exports = {name: value for name, value in current.items()
                        if name not in self.base or self.base[name] != value}
        self.unset = [name for name in self.base if name not in current]

    def start(self, startup_source: list[str], timeout: float) -> ExecResult | None:
        self.run(":", timeout)  # what a fresh session sees: its base environment
        return super().start(startup_source, timeout)


__all__ = ["PS1", "EpisodeShell", "Session", "WrappedShell", "check_syntax", "closers", "parse_exports",
           "plainly_valid"]
