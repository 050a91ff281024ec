"""Could the world of an evaluation run at all? The one place that tells a broken world from a
model's failure, for every path that grades a patch in an episode: the real harness over a recipe's
environment or over an image (``harness.evaluate``), validation and mining (``runs.validate``), the
patch checker and the apply chain (``harness.patches``). (The simulated world's own failure, an
SWR that cannot answer, is told where it answers: ``world.simeval``.)

A broken world is an infrastructure failure (``WorldBrokenError``, an ``InfraError``): the report
says ``error_kind="infra"`` with the cause, the reward is an infrastructure 0 (``seam.reward``), a
rerun evaluates it again. It is broken when

- a command of the harness's own machinery (the patch checker, the apply chain) cannot run
  (``machinery_failure``): the checker runs before the patch touches anything, so nothing of the
  patch can make it fail; an apply command fails so only when its program cannot start;
- the eval script never reached the test command: no start marker of this run and no timeout (no
  shell, a missing loader, a missing working directory); a test patch that does not apply is
  the instance's failure, an ``InfraError`` of its own (the callers say so);
- the test command could not start (``cannot_start``): it exited 126 or 127 and the parser read none
  of the listed tests, and between the markers there is nothing at all, or, among the first lines,
  the shell's or the loader's word that a program is not found or cannot be executed
  (``pytest: command not found``, ``bad interpreter``, ``error while loading shared libraries``);
  or ``python -m X`` said ``No module named X`` and read no listed test. Unless that program is a
  path the patch touches: a patch that deletes or breaks its repository's own test runner fails by
  itself.

What stays the model's failure: everything else that ran, a patch that breaks the package so that
collection fails (pytest exits 2 or 4 with a traceback), a crash or a signal, a cut run, a timeout.
What this cannot tell: a patch that prints a forged "not found" line and exits 127 before the tests
gets no outcome instead of a 0 (it never gains a reward by it).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from sweworld.core.errors import WorldBrokenError
from sweworld.core.types import ExecResult, Task
from sweworld.harness.grade import TEST_PATCH_FAILED, GradeResult, TestRun, listed_tests

CANNOT_START_CODES = frozenset({126, 127})
"""The shell's exit status for a program it cannot execute (126) or cannot find (127)."""
LOOKED_AT = 5
"""Non-empty lines read at the head of an output for the word that a program cannot start."""
_REASONS = (r"command not found|not found|No such file or directory|Permission denied|cannot execute\b.*"
            r"|[^\s:]+: bad interpreter\b.*|error while loading shared libraries\b.*")
_CANNOT = re.compile(rf"(?:^|: )(?P<name>[^\s:]+): (?:{_REASONS})\s*$")
_NO_MODULE = re.compile(r"(?:^|: )No module named '?(?P<name>[\w.]+)'?\s*$")
_TAIL = 600


def _head(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.strip()][:LOOKED_AT]


def _touched(name: str, touched: list[str], workdir: str) -> bool:
    """Whether the program ``name`` is (or lies in) a path the patch touches."""
    if name.startswith(workdir.rstrip("/") + "/"):
        name = name[len(workdir.rstrip("/")) + 1:]
    if name.startswith("/"):
        return False  # outside the repository: the patch never touches it
    name = posixpath.normpath(name)
    if "/" in name:
        return any(p == name or p.startswith(name + "/") for p in touched)
    stem = name[:-3] if name.endswith(".py") else name
    return any(stem in p.split("/") or posixpath.basename(p) in (name, stem + ".py") for p in touched)


def cannot_start(output: str, exit_code: int | None, *, touched: list[str], workdir: str) -> str | None:
    """The line of ``output`` saying a program could not start (exit 126/127, the program not a path
    the patch touches: ``touched``), or None."""
    if exit_code not in CANNOT_START_CODES:
        return None
    for line in _head(output):
        match = _CANNOT.search(line)
        if match and not _touched(match.group("name"), touched, workdir):
            return line
    return None


def _runner_module(test_cmd: str) -> str | None:
    """``X`` of a test command ``python -m X ...`` (its first line), else None."""
    try:
        words = shlex.split(test_cmd.strip().splitlines()[0]) if test_cmd.strip() else []
    except ValueError:
        return None
    for n, word in enumerate(words[:-1]):
        if word == "-m":
            return words[n + 1]
    return None


def test_command_failure(task: Task, run: TestRun, graded: GradeResult, *, test_cmd: str, touched: list[str],
                         workdir: str) -> str | None:
    """Why the test command of a run that reached it (both markers seen) could not start, or None."""
    listed = listed_tests(task)
    if any(name in graded.parsed_status_map for name in listed):
        return None  # the runner read tests: it started
    code = run.exit_code
    if code in CANNOT_START_CODES and not run.test_output.strip():
        return f"the test command printed nothing and exited {code} (it could not start)"
    line = cannot_start(run.test_output, code, touched=touched, workdir=workdir)
    if line:
        return f"the test command could not start (exit {code}): {line}"
    module = _runner_module(test_cmd)
    if module and not _touched(module.replace(".", "/"), touched, workdir):
        for line in _head(run.test_output):
            match = _NO_MODULE.search(line)
            if match and match.group("name") == module:
                return f"the test runner is not installed (exit {code}): {line}"
    return None


def eval_failure(task: Task, run: TestRun, result: ExecResult, graded: GradeResult | None, *, test_cmd: str,
                 touched: list[str], workdir: str) -> str | None:
    """Why the world of one run of the eval script was broken (see the module docstring), or None:
    the run is the patch's to answer for (a timeout included), or its test patch did not apply (the
    instance's, which the callers report as such; unless ``git`` itself could not run). ``graded``: the run's grade (None: not graded; the
    test command's start is then not judged); ``touched``: the patch's paths."""
    if result.timed_out:
        return None
    if run.infra_error == TEST_PATCH_FAILED:  # the instance's, unless git itself could not run
        git = next((line for line in result.output.splitlines()
                    if (m := _CANNOT.search(line.strip())) and posixpath.basename(m.group("name")) == "git"), None)
        return f"the test patch could not be applied: {git.strip()}" if git else None
    if run.infra_error:
        return run.infra_error
    if not run.started:
        tail = result.output.strip()[-_TAIL:]
        return (f"the eval script never reached the test command (exit {result.exit_code})"
                + (f":\n{tail}" if tail else ", no output"))
    if not run.markers_found or graded is None:
        return None  # the test command started and was cut: its own doing
    return test_command_failure(task, run, graded, test_cmd=test_cmd, touched=touched, workdir=workdir)


def check_eval(task: Task, run: TestRun, result: ExecResult, graded: GradeResult | None, *, test_cmd: str,
               touched: list[str], workdir: str) -> None:
    """Raise ``WorldBrokenError`` when ``eval_failure`` finds the world broken."""
    cause = eval_failure(task, run, result, graded, test_cmd=test_cmd, touched=touched, workdir=workdir)
    if cause:
        raise WorldBrokenError(f"the world cannot run the tests: {cause}", where=task.instance_id,
                               hint="the episode's environment or image is broken, not the patch: see "
                                    "test_output.txt and run_instance.log; repair or rebuild it, then run again")


def machinery_failure(result: ExecResult, what: str, *, must_finish: bool = False) -> str | None:
    """Why a command of the harness's machinery (``what``) could not run, or None: exit 126/127 with
    the word that a program cannot start; ``must_finish``: any failure counts (a checker that runs
    before the patch touches anything, so that nothing of the patch can make it fail)."""
    code = 124 if result.timed_out else result.exit_code
    tail = result.output.strip()[-_TAIL:]
    if must_finish:
        return f"{what} could not run (exit {code})" + (f": {tail}" if tail else ", no output")
    line = cannot_start(result.output, code, touched=[], workdir="/")
    return f"{what} could not run (exit {code}): {line}" if line else None


def broken(cause: str, where: str) -> WorldBrokenError:
    """The error of a harness command that ``machinery_failure`` says could not run."""
    return WorldBrokenError(f"the world cannot run the harness: {cause}", where=where,
                            hint="the episode's environment or image is broken (a shell or a program the harness "
                                 "needs cannot run), not the patch; repair or rebuild it, then run again")
