"""SWE-Gym's "executable, validated" instances.

Each instance's tests run twice without a patch and twice with the gold patch (each run in a fresh
episode). A test whose status differs between the two runs of one condition is flaky and dropped.
An instance is kept when at least one test goes fail -> pass and the gold patch makes no test go
pass -> fail. FAIL_TO_PASS / PASS_TO_PASS are computed from the runs when the dataset lacks them,
and disagreements are reported when it has them. A run whose world cannot run (the patch checker,
the eval script or the test command could not start: ``harness.worldcheck``, the same checks as an
evaluation's) makes the verdict an infrastructure failure (``Validation.infra``), never "no test goes
fail -> pass".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sweworld.core.config import ValidateConfig, timeouts
from sweworld.core.errors import InfraError
from sweworld.core.types import Task
from sweworld.harness import grade, patches, worldcheck
from sweworld.harness.evaluate import run_tests
from sweworld.parallel.map import map_items
from sweworld.parallel.runner import VALIDATION, Runner, environment_group, runner_of

PASS = ("PASSED", "XFAIL")


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


def passed(status: str | None) -> bool:
    return status in PASS


def _statuses(task: Task, backend: Any, patch: str | None, timeout: float) -> dict[str, str]:
    """The status of every test of one run (a fresh episode of the real ``backend``); a crashed run
    passes nothing. A world that cannot run the checker or the tests (``harness.worldcheck``) raises
    ``WorldBrokenError``: an infrastructure failure of validation, not an instance without FAIL_TO_PASS."""
    prepared = backend.prepared(task, timeout=timeout)
    with prepared.open() as sb:
        if patch is not None:
            applied = patches.apply_patch(sb, patch, workdir=sb.workdir, label="gold")
            if not applied.applied:
                raise _Invalid("gold patch does not apply" + (f" ({'; '.join(applied.refused)})"
                                                             if applied.refused else ""))
        run, result = run_tests(sb, task, prepared.recipe, timeout=timeout, stand_ins=prepared.stand_ins)
        graded = grade.grade(task, run) if run.markers_found and not run.infra_error else None
        worldcheck.check_eval(task, run, result, graded, test_cmd=prepared.recipe.test_cmd,
                              touched=patches.patch_paths(patch or ""), workdir=sb.workdir)
    if result.timed_out:
        raise _Invalid(f"tests timed out after {timeout:.0f}s")
    if not run.test_patch_applied:
        raise _Invalid("test patch does not apply")
    graded = graded or grade.grade(task, run)
    return {} if graded.crashed else dict(graded.status_map)


class _Invalid(Exception):
    """An instance that cannot be validated, for a reason that goes in the table."""


def _stable(first: dict[str, str], second: dict[str, str]) -> tuple[dict[str, bool], set[str]]:
    names = set(first) | set(second)
    flaky = {n for n in names if passed(first.get(n)) != passed(second.get(n))}
    return {n: passed(first.get(n)) for n in names - flaky}, flaky


def validate_instance(task: Task, backend: Any, *, timeout: float = timeouts.EVALUATION, runs: int = 2) -> Validation:
    """Validate ``task`` by real runs: ``backend`` is a real backend (``backends.real.RealBackend``,
    whose ``prepared`` builds the instance and opens its episodes)."""
    verdict = Validation(task.instance_id)
    if not task.patch.strip():
        verdict.reason = "the instance has no gold patch"
        return verdict
    try:
        before = [_statuses(task, backend, None, timeout) for _ in range(runs)]
        after = [_statuses(task, backend, task.patch, timeout) for _ in range(runs)]
    except _Invalid as exc:
        verdict.reason = str(exc)
        return verdict
    except InfraError as exc:
        verdict.reason, verdict.infra = f"infrastructure: {exc.message.splitlines()[0]}", True
        return verdict
    pre, flaky_pre = _stable(before[0], before[-1])
    post, flaky_post = _stable(after[0], after[-1])
    verdict.flaky = sorted(flaky_pre | flaky_post)
    names = (set(pre) | set(post)) - set(verdict.flaky)
    verdict.fail_to_pass = sorted(n for n in names if post.get(n) and not pre.get(n))
    verdict.pass_to_pass = sorted(n for n in names if post.get(n) and pre.get(n))
    verdict.pass_to_fail = sorted(n for n in names if pre.get(n) and not post.get(n))
    if not verdict.fail_to_pass:
        verdict.reason = "no test goes fail -> pass with the gold patch"
    elif verdict.pass_to_fail:
        verdict.reason = f"the gold patch breaks {len(verdict.pass_to_fail)} passing tests"
    else:
        verdict.kept, verdict.reason = True, "ok"
    verdict.disagreements = _disagreements(task, verdict)
    f2p = task.FAIL_TO_PASS or verdict.fail_to_pass
    p2p = task.PASS_TO_PASS or verdict.pass_to_pass
    flaky = set(verdict.flaky)
    verdict.task = task.model_copy(update={"FAIL_TO_PASS": [t for t in f2p if t not in flaky],
                                           "PASS_TO_PASS": [t for t in p2p if t not in flaky]})
    return verdict


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
