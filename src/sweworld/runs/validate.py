"""SWE-Gym's "executable, validated" instances.

Each instance's tests run twice without a patch and twice with the gold patch (each run in a fresh
episode). A test whose status differs between the two runs of one condition is flaky and dropped.
An instance is kept when at least one test goes fail -> pass and the gold patch makes no test go
pass -> fail. FAIL_TO_PASS / PASS_TO_PASS are computed from the runs when the dataset lacks them,
and disagreements are reported when it has them. A run whose world cannot run (the patch checker,
the eval script or the test command could not start: ``harness.worldcheck``, the same checks as an
evaluation's) makes the verdict an infrastructure failure (``Validation.infra``), never "no test goes
fail -> pass". A verdict without FAIL_TO_PASS names its cause, read from the runs' logs
(``runs.causes``: the tests need the network, do not import, fail to collect, found nothing...); an
environment that does not build names its log and the line of it that says why.

Mined instances (``mined=True``, ``sweworld mine``) add two rules to SWE-Gym's; ``sweworld validate``
keeps SWE-bench's semantics without them:

- the runs with the fix go first, and a run before the fix gets at most ``max(BEFORE_FLOOR,
  BEFORE_FACTOR x`` the slowest run with it``)`` seconds: a test that hangs before the fix costs a
  minute, not the whole ``timeout``;
- the collection rule: a test that "fails" before the fix only because it has no result of its own
  there (its file failed to collect or import, or the run crashed) is FAIL_TO_PASS only when the test
  patch adds or changes it (``runs.causes.touches``); the others are left out of FAIL_TO_PASS and
  named in ``Validation.uncollected``. A candidate left without FAIL_TO_PASS so is dropped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sweworld.core.config import ValidateConfig, timeouts
from sweworld.core.errors import EnvBuildError, InfraError
from sweworld.core.types import Task
from sweworld.harness import grade, patches, worldcheck
from sweworld.harness.evaluate import reinstall_patched, run_tests
from sweworld.parallel.map import map_items
from sweworld.parallel.runner import VALIDATION, Runner, environment_group, runner_of
from sweworld.runs.causes import run_cause, touched_tests, touches

PASS = ("PASSED", "XFAIL")
BEFORE_FLOOR = 60.0
BEFORE_FACTOR = 5.0
UNCOLLECTED = "FAIL_TO_PASS only from a file that failed to collect"


@dataclass
class Validation:
    """The verdict on one instance."""

    instance_id: str
    kept: bool = False
    reason: str = ""
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    pass_to_fail: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    task: Task | None = None
    infra: bool = False
    """Not validated: the infrastructure failed (``reason`` says how), not the instance."""
    cause: str | None = None
    """Why it was not kept, short enough to group verdicts by (the summary's lines): the cause of
    "no FAIL_TO_PASS" read from the logs, the first error line of a failed build..."""
    uncollected: list[str] = field(default_factory=list)
    """Mined: tests left out of FAIL_TO_PASS by the collection rule (see the module docstring)."""
    cpu_seconds: float | None = None
    """CPU time of the validation, when measured where it ran (``mine.pipeline``)."""


def passed(status: str | None) -> bool:
    return status in PASS


@dataclass
class Seen:
    """One run of the tests."""

    statuses: dict[str, str]
    """Test -> status as graded ({} when the run crashed)."""
    parsed: dict[str, str]
    """Test -> status as the output names them, crashed or not."""
    cause: str | None
    """Why the run gave no per-test results (``runs.causes.run_cause``), None when tests ran."""
    seconds: float


def _seen(task: Task, backend: Any, patch: str | None, timeout: float, when: str = "") -> Seen:
    """One run (a fresh episode of the real ``backend``); a crashed run passes nothing. A world that
    cannot run the checker or the tests (``harness.worldcheck``) raises ``WorldBrokenError``: an
    infrastructure failure of validation, not an instance without FAIL_TO_PASS."""
    prepared = backend.prepared(task, timeout=timeout)
    with prepared.open() as sb:
        if patch is not None:
            applied = patches.apply_patch(sb, patch, workdir=sb.workdir, label="gold")
            if not applied.applied:
                raise _Invalid("gold patch does not apply" + (f" ({'; '.join(applied.refused)})"
                                                             if applied.refused else ""))
            reinstall_patched(sb, prepared, patch, task.instance_id, timeout)  # a compiled source, setup.py...
        started = time.monotonic()
        run, result = run_tests(sb, task, prepared.recipe, timeout=timeout, stand_ins=prepared.stand_ins)
        seconds = time.monotonic() - started
        graded = grade.grade(task, run) if run.markers_found and not run.infra_error else None
        worldcheck.check_eval(task, run, result, graded, test_cmd=prepared.recipe.test_cmd,
                              touched=patches.patch_paths(patch or ""), workdir=sb.workdir)
    if result.timed_out:
        raise _Invalid(f"tests timed out after {timeout:.0f}s{when}")
    if not run.test_patch_applied:
        raise _Invalid("test patch does not apply")
    graded = graded or grade.grade(task, run)
    output = grade.strip_ansi(run.test_output if run.markers_found else result.output)
    return Seen(statuses={} if graded.crashed else dict(graded.status_map), parsed=dict(graded.parsed_status_map),
                cause=run_cause(output, run.exit_code, graded.parsed_status_map), seconds=seconds)


class _Invalid(Exception):
    """An instance that cannot be validated, for a reason that goes in the table."""


def _stable(first: dict[str, str], second: dict[str, str]) -> tuple[dict[str, bool], set[str]]:
    names = set(first) | set(second)
    flaky = {n for n in names if passed(first.get(n)) != passed(second.get(n))}
    return {n: passed(first.get(n)) for n in names - flaky}, flaky


def _runs(task: Task, backend: Any, timeout: float, runs: int, mined: bool) -> tuple[list[Seen], list[Seen]]:
    """(before, after): ``runs`` runs without and with the gold patch (mined: after first, and the
    runs before bounded by the runs after, see the module docstring)."""
    if not mined:
        before = [_seen(task, backend, None, timeout) for _ in range(runs)]
        return before, [_seen(task, backend, task.patch, timeout) for _ in range(runs)]
    after = [_seen(task, backend, task.patch, timeout) for _ in range(runs)]
    slowest = max(s.seconds for s in after)
    bound = min(timeout, max(BEFORE_FLOOR, BEFORE_FACTOR * slowest))
    when = f" before the fix (with the fix they took {slowest:.0f}s)" if bound < timeout else " before the fix"
    return [_seen(task, backend, None, bound, when) for _ in range(runs)], after


def _infra(verdict: Validation, exc: InfraError) -> None:
    """An infrastructure failure; a build's names its log and the line of it that says why."""
    first = exc.message.splitlines()[0]
    verdict.infra = True
    if isinstance(exc, EnvBuildError) and exc.log_path:
        line = exc.cause or first
        said = first if line in first else f"{first}: {line}"  # envs.build names the line already
        verdict.reason = f"infrastructure: {said} (build log: {exc.log_path})"
        verdict.cause = f"environment does not build: {line}"
    else:
        verdict.reason = f"infrastructure: {first}"


def validate_instance(task: Task, backend: Any, *, timeout: float = timeouts.EVALUATION, runs: int = 2,
                      mined: bool = False) -> Validation:
    """Validate ``task`` by real runs: ``backend`` is a real backend (``backends.real.RealBackend``,
    whose ``prepared`` builds the instance and opens its episodes); ``mined``: the rules of mined
    instances (see the module docstring)."""
    verdict = Validation(task.instance_id)
    if not task.patch.strip():
        verdict.reason = "the instance has no gold patch"
        return verdict
    try:
        before, after = _runs(task, backend, timeout, runs, mined)
    except _Invalid as exc:
        verdict.reason = str(exc)
        return verdict
    except InfraError as exc:
        _infra(verdict, exc)
        return verdict
    _decide(verdict, task, before, after, mined)
    verdict.disagreements = _disagreements(task, verdict)
    f2p = task.FAIL_TO_PASS or verdict.fail_to_pass
    p2p = task.PASS_TO_PASS or verdict.pass_to_pass
    flaky = set(verdict.flaky)
    verdict.task = task.model_copy(update={"FAIL_TO_PASS": [t for t in f2p if t not in flaky],
                                           "PASS_TO_PASS": [t for t in p2p if t not in flaky]})
    return verdict


def _decide(verdict: Validation, task: Task, before: list[Seen], after: list[Seen], mined: bool) -> None:
    """The lists and the verdict of the runs."""
    pre, flaky_pre = _stable(before[0].statuses, before[-1].statuses)
    post, flaky_post = _stable(after[0].statuses, after[-1].statuses)
    verdict.flaky = sorted(flaky_pre | flaky_post)
    names = (set(pre) | set(post)) - set(verdict.flaky)
    verdict.fail_to_pass = sorted(n for n in names if post.get(n) and not pre.get(n))
    verdict.pass_to_pass = sorted(n for n in names if post.get(n) and pre.get(n))
    verdict.pass_to_fail = sorted(n for n in names if pre.get(n) and not post.get(n))
    if mined and verdict.fail_to_pass:
        verdict.uncollected = _uncollected(task, verdict.fail_to_pass, before)
        verdict.fail_to_pass = [n for n in verdict.fail_to_pass if n not in set(verdict.uncollected)]
    if not verdict.fail_to_pass and verdict.uncollected:
        verdict.reason = verdict.cause = UNCOLLECTED
    elif not verdict.fail_to_pass:
        verdict.reason = "no test goes fail -> pass with the gold patch"
        verdict.cause = no_fail_to_pass_cause(before, after, pre, post, verdict.flaky)
        verdict.reason += f" ({verdict.cause})"
    elif verdict.pass_to_fail:
        verdict.reason = f"the gold patch breaks {len(verdict.pass_to_fail)} passing tests"
    else:
        verdict.kept, verdict.reason = True, "ok"


def _uncollected(task: Task, fail_to_pass: list[str], before: list[Seen]) -> list[str]:
    """The tests of ``fail_to_pass`` with no result of their own before the fix that the test patch
    neither adds nor changes (the collection rule)."""
    seen = set().union(*(s.parsed for s in before))
    absent = [n for n in fail_to_pass if n not in seen]
    if not absent:
        return []
    touched = touched_tests(task.test_patch)
    return [n for n in absent if not touches(n, touched)]


def no_fail_to_pass_cause(before: list[Seen], after: list[Seen], pre: dict[str, bool], post: dict[str, bool],
                          flaky: list[str]) -> str:
    """Why no test goes fail -> pass, from the runs (see ``runs.causes``)."""
    with_fix = next((s.cause for s in after if s.cause), None)
    if with_fix:
        return f"{with_fix} with the fix"
    if flaky:
        return "flaky only"
    if post and all(post.values()) and all(pre.get(n) for n in post):
        return "the tests pass before the fix too"
    if not any(post.values()):
        return "the tests fail with the fix too"
    without = next((s.cause for s in before if s.cause), None)
    return f"{without} before the fix, and no test passes after it" if without else "no test changes status"


def _disagreements(task: Task, verdict: Validation) -> list[str]:
    notes = []
    for label, given, found in (("FAIL_TO_PASS", task.FAIL_TO_PASS, verdict.fail_to_pass),
                                ("PASS_TO_PASS", task.PASS_TO_PASS, verdict.pass_to_pass)):
        if not given:
            continue
        missing = sorted(set(given) - set(found) - set(verdict.flaky))
        extra = sorted(set(found) - set(given))
        if missing:
            notes.append(f"{label}: {len(missing)} listed tests did not behave so: {', '.join(missing[:5])}")
        if extra:
            notes.append(f"{label}: {len(extra)} more tests behave so than listed")
    return notes


def validate_tasks(tasks: list[Task], config: ValidateConfig | None = None, *, backend: Any = None, on_done=None,
                   runner: Runner | None = None) -> list[Validation]:
    """Validate ``tasks`` as ``config`` says (``timeouts.evaluation``, workers) with ``backend``
    (default: the real one ``config.backend`` describes) on ``runner`` (default: ``config.runner``'s)."""
    config = config or ValidateConfig()
    workers, timeout = config.runner.workers, config.timeouts.evaluation
    if backend is None:
        from sweworld.backends import make_backend
        backend = make_backend(config.backend, timeouts=config.timeouts)
    runner = runner or runner_of(config.runner)
    return map_items(tasks, partial(validate_instance, timeout=timeout), runner=runner, workers=workers,
                     hints=VALIDATION, group=environment_group, share=backend,
                     on_done=(lambda _task, verdict: on_done(verdict)) if on_done else None)
