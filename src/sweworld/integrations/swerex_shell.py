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
runs nothing (and a sim episode would predict it rather than run it). The check is
:func:`sweworld.shell.check.syntax_check`: a plainly valid command (``plainly_valid``: plain words, quotes
without expansions, pipes, ``&&``/``||``/``;`` and simple redirections) skips it.
"""

from __future__ import annotations

import re
import shlex
import threading
import uuid
from typing import TYPE_CHECKING

from swerex.exceptions import BashIncorrectSyntaxError

from sweworld.core.protocols import ExecCapable
from sweworld.shell.check import CHECK_TIMEOUT, closers, syntax_check
from sweworld.shell.plain import plainly_valid
from sweworld.shell.words import NAME

if TYPE_CHECKING:
    from sweworld.executor import Executor
    from sweworld.types import ExecResult

PS1 = "SHELLPS1PREFIX"
"""swerex's prompt: the ``expect_string`` of a command that ran to its end."""
STATE_PREFIX = "/tmp/.sweworld-rex-"
"""Where a wrapped session writes its cwd and exports after each command (one file per session)."""


def check_syntax(command: str) -> str:
    """swerex's ``_check_bash_command``: ``BashIncorrectSyntaxError`` (its message and ``extra_info``)
    when ``bash -n`` refuses ``command``; else bash's warnings (an unterminated here-document).

    ``bash -n`` reads the command and runs nothing of it (no expansion, no substitution), so it runs
    here, in the server's process, as swerex's runtime runs it in its own (with the bash binary the
    sandbox mounts): :func:`sweworld.shell.check.syntax_check`."""
    result = syntax_check(command)
    if result.ok:
        return result.stderr
    code, stdout, stderr = result.exit_code, result.stdout, result.stderr
    message = (f"Error (exit code {code}) while checking bash command \n{command!r}\n"
               f"---- Stderr ----\n{stderr}\n---- Stdout ----\n{stdout}")
    raise BashIncorrectSyntaxError(message, extra_info={"bash_stdout": stdout, "bash_stderr": stderr})


#: ``export -p`` lines: ``declare -x NAME``, ``declare -x NAME="..."`` or ``declare -x NAME=$'...'``.
_EXPORT = re.compile(rf"""^declare -([A-Za-z-]+) ({NAME})(?:=("(?:[^"\\]|\\.)*"|\$'(?:[^'\\]|\\.)*'))?$""",
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


__all__ = ["CHECK_TIMEOUT", "PS1", "EpisodeShell", "Session", "WrappedShell", "check_syntax", "closers",
           "parse_exports", "plainly_valid"]
