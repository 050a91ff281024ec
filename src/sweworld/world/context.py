"""What SWT and SWR are shown: pydantic contexts, built from a task and an ``Executor``.

The contexts are data (they become training rows as they are, ``model_dump()``); the templates of
``sweworld.world.templates`` turn them into messages. Every text is bounded (head and tail kept,
the middle cut with a marker) by ``ContextLimits``, in characters (about 4 per token).

- ``swt_context``: task metadata, problem statement, the command, the files it executes (parsed
  from it by ``sweworld.world.commands``; at most ``max_files``, read through the executor), the
  agent's current diff, the last ``history_steps`` steps; the gold patch, hints and test names
  only with ``privileged=True``.
- ``swr_context``: problem statement, the test command a real run would use (recipe + directives),
  the test files as they are after the test patch (``sweworld.world.testfiles``), the agent's
  patch, the gold patch, FAIL_TO_PASS / PASS_TO_PASS.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from sweworld.core.executor import Executor
from sweworld.core.types import ExecResult, Task
from sweworld.tools.truncate import truncate_observation
from sweworld.world.commands import executed_code

if TYPE_CHECKING:
    from sweworld.world.testfiles import Workspace

INLINE_PATH = "<python -c>"
"""The path under which ``python -c`` code is listed among the executed files."""


class ContextLimits(BaseModel):
    """Bounds on every section, in characters (head and tail kept)."""

    max_files: int = Field(default=20, ge=0, description="Executed files (SWT) or test files (SWR) shown at most.")
    file_chars: int = Field(default=16_000, ge=0, description="Characters kept of each file.")
    files_chars: int = Field(default=60_000, ge=0, description="Characters kept of all files together.")
    problem_chars: int = Field(default=40_000, ge=0, description="Characters kept of the problem statement.")
    command_chars: int = Field(default=20_000, ge=0, description="Characters kept of the command.")
    diff_chars: int = Field(default=60_000, ge=0, description="Characters kept of the agent's diff.")
    gold_chars: int = Field(default=40_000, ge=0, description="Characters kept of the gold patch.")
    max_tests: int = Field(default=500, ge=0, description="Test names shown per list (FAIL_TO_PASS, PASS_TO_PASS).")
    history_steps: int = Field(default=5, ge=0, description="Recent steps (command + output) shown to SWT.")
    step_chars: int = Field(default=2_000, ge=0, description="Characters kept of each recent step's output.")


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, head and tail kept (0: unlimited)."""
    return truncate_observation(text, max_chars=limit, max_lines=0) if limit else text


class TaskInfo(BaseModel):
    """The task as the world models see it (no gold data)."""

    instance_id: str
    repo: str
    base_commit: str
    version: str = ""
    problem_statement: str = ""


class FileText(BaseModel):
    """One file shown to a model."""

    path: str = Field(description="The path as the command or the test patch names it.")
    content: str = Field(description="The text, bounded.")
    truncated: bool = Field(default=False, description="The middle was cut.")


class HistoryStep(BaseModel):
    """One earlier step of the episode: what ran and what it printed."""

    command: str
    output: str = ""
    exit_code: int | None = None


class SWTContext(BaseModel):
    """Everything SWT is shown for one command."""

    task: TaskInfo
    workdir: str = Field(description="Where the repository lives as commands see it (/testbed).")
    command: str = Field(description="The command whose output is predicted.")
    files: list[FileText] = Field(default_factory=list, description="Files the command executes, python -c code.")
    diff: str = Field(default="", description="The agent's changes so far (git diff against the base commit).")
    history: list[HistoryStep] = Field(default_factory=list, description="The last steps, oldest first.")
    privileged: bool = Field(default=False, description="The gold fields below are filled.")
    gold_patch: str = Field(default="", description="The reference fix (privileged).")
    hints: str = Field(default="", description="The task's hints text (privileged).")
    fail_to_pass: list[str] = Field(default_factory=list, description="FAIL_TO_PASS test names (privileged).")
    pass_to_pass: list[str] = Field(default_factory=list, description="PASS_TO_PASS test names (privileged).")
    analysis: str = Field(default="", description="A written analysis of the task, when one exists.")


class SWRContext(BaseModel):
    """Everything SWR is shown for one patch."""

    task: TaskInfo
    test_command: str = Field(description="The command a real evaluation runs (recipe test_cmd + directives).")
    test_files: list[FileText] = Field(default_factory=list, description="Test files after the test patch.")
    patch: str = Field(description="The agent's patch under evaluation.")
    gold_patch: str = Field(default="", description="The reference fix.")
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    analysis: str = Field(default="", description="A written analysis of the task, when one exists.")


def task_info(task: Task, limits: ContextLimits) -> TaskInfo:
    return TaskInfo(instance_id=task.instance_id, repo=task.repo, base_commit=task.base_commit,
                    version=str(task.version or ""), problem_statement=cut(task.problem_statement, limits.problem_chars))


def bounded_files(texts: Sequence[tuple[str, str]], limits: ContextLimits) -> list[FileText]:
    """(path, text) pairs bounded per file and in total; at most ``max_files``."""
    out: list[FileText] = []
    budget = limits.files_chars
    for path, text in list(texts)[:limits.max_files]:
        if limits.files_chars and budget <= 0:
            break
        limit = min(limits.file_chars, budget) if limits.files_chars else limits.file_chars
        content = cut(text, limit)
        out.append(FileText(path=path, content=content, truncated=content != text))
        budget -= len(content)
    return out


def read_executed(executor: Executor, command: str, limits: ContextLimits) -> list[FileText]:
    """The files ``command`` executes, read through ``executor`` (missing or unreadable ones
    skipped), then its ``python -c`` code."""
    code = executed_code(command)
    texts: list[tuple[str, str]] = []
    for path in code.files:
        if len(texts) >= limits.max_files:
            break
        try:
            texts.append((path, executor.read_file(path)))
        except (OSError, UnicodeError):
            continue
    texts += [(INLINE_PATH, inline) for inline in code.inline]
    return bounded_files(texts, limits)


def cap_tests(names: Sequence[str], limits: ContextLimits) -> list[str]:
    """At most ``max_tests`` names; a last line says how many more there are."""
    names = list(names)
    if not limits.max_tests or len(names) <= limits.max_tests:
        return names
    return [*names[:limits.max_tests], f"... and {len(names) - limits.max_tests} more tests"]


def recent_steps(history: Sequence[HistoryStep], limits: ContextLimits) -> list[HistoryStep]:
    steps = list(history)[-limits.history_steps:] if limits.history_steps else []
    return [HistoryStep(command=cut(s.command, limits.step_chars), output=cut(s.output, limits.step_chars),
                        exit_code=s.exit_code) for s in steps]


def swt_context(task: Task, command: str, executor: Executor, history: Sequence[HistoryStep] = (), *,
                limits: ContextLimits | None = None, privileged: bool = False, analysis: str = "") -> SWTContext:
    """SWT's context for ``command`` in the episode ``executor`` (see the module docstring)."""
    limits = limits or ContextLimits()
    gold = {}
    if privileged:
        gold = {"gold_patch": cut(task.patch, limits.gold_chars), "hints": cut(task.hints_text, limits.problem_chars),
                "fail_to_pass": cap_tests(task.FAIL_TO_PASS, limits), "pass_to_pass": cap_tests(task.PASS_TO_PASS, limits)}
    return SWTContext(task=task_info(task, limits), workdir=executor.workdir,
                      command=cut(command, limits.command_chars),
                      files=read_executed(executor, command, limits), diff=cut(executor.diff(), limits.diff_chars),
                      history=recent_steps(history, limits), privileged=privileged, analysis=analysis, **gold)


def test_command(task: Task, test_cmd: str | None = None) -> str:
    """The command a real evaluation of ``task`` runs: the recipe's ``test_cmd`` (or ``test_cmd``)
    followed by the shell-quoted directives, exactly as ``harness.evalscript`` joins them."""
    from sweworld.harness.directives import test_directives

    if test_cmd is None:
        test_cmd = recipe_test_cmd(task)
    return " ".join([test_cmd.strip(), *(shlex.quote(d) for d in test_directives(task, test_cmd))])


test_command.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported


def recipe_test_cmd(task: Task) -> str:
    """``resolve_recipe(task, None).test_cmd``; a spec that needs the tree to read its packages
    (environment.yml) still names its test command, read from the spec itself."""
    from sweworld.core.errors import EnvBuildError
    from sweworld.envs import swebench_specs
    from sweworld.envs.recipes import from_spec, resolve_recipe

    try:
        return resolve_recipe(task, None).test_cmd
    except EnvBuildError:
        spec = dict(swebench_specs.spec_for(task.repo, task.version) or {})
        spec.pop("packages", None)  # the part that needed the tree
        return from_spec(spec, task.repo, None, str(task.version)).test_cmd


def test_file_paths(task: Task) -> list[str]:
    """The test files SWR is shown: those of the test patch, else those named by the test ids."""
    from sweworld.harness.directives import id_targets, test_files

    if task.test_patch.strip():
        return test_files(task.test_patch)
    return [p for p in id_targets([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]) if p.endswith(".py")]


test_file_paths.__test__ = False  # type: ignore[attr-defined]


def swr_context(task: Task, patch: str, executor: Workspace, *, limits: ContextLimits | None = None,
                test_cmd: str | None = None, analysis: str = "",
                test_files: Sequence[tuple[str, str]] | None = None) -> SWRContext:
    """SWR's context for ``patch`` (see the module docstring); ``test_cmd`` overrides the recipe's,
    ``test_files`` (path, text) the files read through ``executor`` after the test patch."""
    from sweworld.world.testfiles import files_after_test_patch

    limits = limits or ContextLimits()
    texts = test_files
    if texts is None:
        texts = files_after_test_patch(executor, task, test_file_paths(task)[:limits.max_files], limit=limits.file_chars)
    return SWRContext(task=task_info(task, limits), test_command=cut(test_command(task, test_cmd), limits.command_chars),
                      test_files=bounded_files(texts, limits), patch=cut(patch, limits.diff_chars),
                      gold_patch=cut(task.patch, limits.gold_chars), fail_to_pass=cap_tests(task.FAIL_TO_PASS, limits),
                      pass_to_pass=cap_tests(task.PASS_TO_PASS, limits), analysis=analysis)


HISTORY = 20
"""Steps an episode keeps for SWT's context (the context builder keeps the most recent within its bounds)."""


def with_step(history: Sequence[HistoryStep], command: str, result: ExecResult) -> list[HistoryStep]:
    """``history`` with one more step, the last ``HISTORY`` kept."""
    return [*history, HistoryStep(command=command, output=result.output, exit_code=result.exit_code)][-HISTORY:]
