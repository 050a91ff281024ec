"""Fitting the embedded SWT: ``learn(traces, tasks, trees) -> EmbeddedData``.

- Tasks come from the dataset rows given, from each evaluation's task (gold fields included), else
  from a step's context (privileged contexts carry the gold patch and the test lists).
- Every code-execution step (routed ``sim``) becomes a ``StepRecord`` (nearest neighbour) keyed for
  exact replay by ``state_key``.
- Every test run, a step's or an evaluation's, teaches per-test statuses for its workspace state
  (an evaluation's only when the task has no test patch: its tests ran on another tree), failure
  sections, summary lines, the repository's pytest header, Django's lines around the report and
  unittest's docstring lines and skip reasons, sympy's header, the lines tox and nox print before
  the test command, the runner's own duration figure. A test a
  step named explicitly that the output does not list as failed passed when the final counts agree.
- ``trees(task) -> Path | None``: the base tree of a task, to build its repository's import graph.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from sweworld.core.types import Task
from sweworld.surrogates.swt.djangofmt import learned_parts
from sweworld.surrogates.swt.facts import (
    EmbeddedData,
    InstanceFacts,
    RepoFacts,
    StepRecord,
    diff_digest,
    state_key,
)
from sweworld.surrogates.swt.importgraph import graph_of_tree
from sweworld.surrogates.swt.predictor import state_class
from sweworld.surrogates.swt.pytestlog import parse_pytest
from sweworld.surrogates.swt.sympyfmt import START, parse_sympy
from sweworld.surrogates.swt.testcmd import TestRun, parse_test_command
from sweworld.surrogates.swt.unittestfmt import parse_notes, parse_unittest
from sweworld.surrogates.swt.wrappers import learned_lines
from sweworld.world.context import SWTContext
from sweworld.world.metrics import final_counts
from sweworld.world.replay import recorded_test_report
from sweworld.world.traces import EvalTrace, StepTrace

_SECONDS = re.compile(r"(?:passed|failed|errors?|ran|deselected|skipped)[^\n]* in (\d+\.\d+)s\b"
                      r"|^Ran \d+ tests? in (\d+\.\d+)s$"
                      r"|^[ =]*(?:tests finished: .*)?\bin (\d+\.\d+) seconds\b", re.MULTILINE)


def task_from_context(context: SWTContext) -> Task:
    """The task a step's context shows (gold fields only when it is privileged)."""
    lists = {name: [t for t in getattr(context, name) if not t.startswith("... and ")]
             for name in ("fail_to_pass", "pass_to_pass")}
    return Task(instance_id=context.task.instance_id, repo=context.task.repo, base_commit=context.task.base_commit,
                version=context.task.version, problem_statement=context.task.problem_statement,
                patch=context.gold_patch, FAIL_TO_PASS=lists["fail_to_pass"], PASS_TO_PASS=lists["pass_to_pass"])


def learn_run(data: EmbeddedData, facts: InstanceFacts, run: TestRun | None, text: str, state: str | None) -> None:
    """What one recorded test run teaches (``state`` None: statuses not kept)."""
    repo = data.repos.setdefault(facts.task["repo"], RepoFacts())
    if run is not None and run.wrapper is not None:
        tool = run.wrapper.tool
        repo.wrapped[tool] = learned_lines(run.wrapper, text) or repo.wrapped.get(tool, [])
    if START in text or (run is not None and run.runner == "sympy"):
        sympy = parse_sympy(text)
        found, failures = dict(sympy.statuses), sympy.failures
        repo.sympy_header = sympy.header or repo.sympy_header
    elif "test session starts" in text or (run is not None and run.runner == "pytest"):
        log = parse_pytest(text, run.tb if run else "auto")
        found, failures = dict(log.statuses), log.failures
        facts.summaries.update(log.summaries)
        facts.reasons.update(log.reasons)
        for test, lines in log.partial.items():
            facts.failures.setdefault(test, lines)
        repo.header = log.header or repo.header
        repo.python = log.python or repo.python
        if log.warnings:
            repo.warnings, repo.warning_count = log.warnings, log.warning_count
        named = [t for t in (run.targets if run else []) if "::" in t]
        counts = final_counts(text)
        bad = [t for t in named if found.get(t) in ("FAILED", "ERROR")]
        if named and len(named) == len(run.targets) and not run.keyword and counts and \
                counts.get("failed", 0) + counts.get("error", 0) == len(bad) and \
                counts.get("passed", 0) == len(named) - len(bad):
            found.update({t: "PASSED" for t in named if t not in found})
    else:
        found, failures = parse_unittest(text)
        descriptions, reasons = parse_notes(text)
        facts.descriptions.update(descriptions)
        facts.reasons.update(reasons)
        preamble, epilogue = learned_parts(text)
        if preamble:
            repo.preamble, repo.epilogue = preamble, epilogue
    facts.failures.update(failures)
    if state is not None and found:
        facts.states.setdefault(state, {}).update(found)
    seconds = [a or b or c for a, b, c in _SECONDS.findall(text)]
    if seconds and found:
        facts.durations = [*facts.durations[-49:], float(seconds[-1])]


def learn_step(data: EmbeddedData, trace: StepTrace) -> None:
    context = trace.context
    facts = data.instances.get(trace.instance_id) or data.add_task(task_from_context(context), replace=False)
    if trace.routed == "sim":
        data.replay[state_key(context)] = len(data.steps)
        data.steps.append(StepRecord(instance_id=trace.instance_id, repo=trace.repo, command=trace.command,
                                     files=[f.path for f in context.files], diff=diff_digest(context.diff),
                                     state=state_class(context.diff, facts.task.get("patch") or ""),
                                     output=trace.output, exit_code=trace.exit_code))
    run = parse_test_command(trace.command, context.workdir)
    if run is not None and not trace.timed_out:
        learn_run(data, facts, run, trace.output, diff_digest(context.diff))


def learn_eval(data: EmbeddedData, trace: EvalTrace) -> None:
    task = Task.model_validate(trace.task)
    facts = data.add_task(task)
    state = diff_digest(trace.patch) if not task.test_patch.strip() else None
    learn_run(data, facts, None, recorded_test_report(trace), state)


def repo_trees(repos_dir: str | Path | None = None) -> Callable[[Task], Path | None]:
    """``trees`` for ``learn``: a task's base tree from the repository cache (None when unavailable)."""
    from sweworld.core.errors import SWEWorldError
    from sweworld.repos import RepoStore

    store = RepoStore(repos_dir=repos_dir)

    def tree(task: Task) -> Path | None:
        try:
            return store.base_tree(task)
        except SWEWorldError:
            return None

    return tree


def learn(traces: Iterable[StepTrace | EvalTrace], tasks: Iterable[Task] = (), *,
          trees: Callable[[Task], Path | None] | None = None, data: EmbeddedData | None = None) -> EmbeddedData:
    """The facts of ``traces`` (added to ``data`` when given); see the module docstring."""
    data = data or EmbeddedData()
    traces = list(traces)
    for task in [*tasks, *(Task.model_validate(t.task) for t in traces if isinstance(t, EvalTrace))]:
        data.add_task(task)
    for trace in traces:
        (learn_step if isinstance(trace, StepTrace) else learn_eval)(data, trace)  # type: ignore[operator]
    if trees is not None:
        for repo, facts in data.repos.items():
            task = next((f.as_task() for f in data.instances.values() if f.task["repo"] == repo), None)
            root = trees(task) if task is not None and not facts.graph else None
            if root is not None:
                facts.graph = graph_of_tree(Path(root))
    return data
