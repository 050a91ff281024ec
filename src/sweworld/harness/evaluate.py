"""Evaluate one prediction of one instance in a fresh episode that a backend provides.

The harness opens nothing itself: ``evaluate_prepared`` receives ``prepare``, a callable of the real
backend (``backends/real.py``) that builds what the instance needs and returns its recipe and a way
to open a fresh episode with the instance installed. Steps, as the SWE-bench harness takes them: apply the model patch (refusing unsafe paths, falling
back through the apply chain), reinstall when the patch touches packaging or compiled sources,
run the eval script (test patch, markers with a fresh nonce, the test command on the directives,
its exit code), parse and grade. Infrastructure failures (``InfraError``: environment, sandbox,
repository, apply machinery, test patch, a world that cannot run its checker or its tests:
``harness.worldcheck``) are reported apart from model failures, with their cause. The instance's
directory receives ``patch.diff``, ``eval.sh``, ``test_output.txt``, ``report.json`` and
``run_instance.log``.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.core.config import timeouts
from sweworld.core.errors import InfraError, WorldBrokenError
from sweworld.core.executor import Executor
from sweworld.core.protocols import Described, ExecCapable
from sweworld.core.types import ExecResult, ServiceLines, Task
from sweworld.harness import directives, evalscript, grade, patches, worldcheck
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import (
    EVAL_SCRIPT_FILE,
    LOG_FILE,
    PATCH_FILE,
    REPORT_FILE,
    TEST_OUTPUT_FILE,
    InstanceReport,
    clear_report,
    write_atomic,
    write_report,
)

if TYPE_CHECKING:
    from sweworld.envs.recipes import EnvRecipe

REINSTALL_SUFFIXES = (".pyx", ".pxd", ".c", ".cc", ".cpp", ".h", ".f90")
REINSTALL_NAMES = ("setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in")
TEST_OUTPUT_CAP = 64 * 1024 * 1024


@dataclass
class Prepared:
    """What the harness needs of an instance, from the backend that built it."""

    recipe: EnvRecipe
    open: Callable[[], Executor]
    """A fresh episode with the instance installed (closed by the harness)."""
    build_env: dict[str, str] = field(default_factory=dict)
    """Variables every reinstall of the instance needs (the offline settings of an episode, a
    setuptools_scm version)."""
    describe: str = ""
    """One line for run_instance.log (environment, interpreter, layer)."""
    stand_ins: ServiceLines = field(default_factory=ServiceLines)
    """The lines that start and stop the local network stand-ins around the tests (none when the
    tests may reach the real network)."""


def stateless(sb: Executor, command: str, *, timeout: float, cap: int | None = None) -> ExecResult:
    """``command`` in a fresh shell of the episode where the executor offers one (a sandbox's
    ``exec``: the agent's shell untouched, a large output cap), else through ``run``."""
    if isinstance(sb, ExecCapable):
        return sb.exec(command, cwd=sb.workdir, timeout=timeout, cap=cap)
    return sb.run(command, cwd=sb.workdir, timeout=timeout)


@dataclass
class InstanceLog:
    """``run_instance.log``: what happened, step by step, with timings (not part of the report)."""

    path: Path
    lines: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __call__(self, message: str) -> None:
        self.lines.append(f"[{time.monotonic() - self.started:7.2f}s] {message}")

    def flush(self) -> None:
        write_atomic(self.path, "\n".join(self.lines) + "\n")


_EDITABLE = re.compile(r"(^|\s)(-e|--editable)(\s|=|$)|\bsetup\.py\s+develop\b")


def is_editable(install: str) -> bool:
    """Whether the install command leaves the tree importable in place (``-e``, ``setup.py develop``)."""
    return bool(_EDITABLE.search(install))


def needs_reinstall(patch: str, install: str | None = None) -> bool:
    """Whether the patched tree must be installed again before the tests: always after a
    non-editable install (the tests would import the unpatched copy in site-packages; SWE-bench's
    eval script reinstalls every time), else when the patch touches packaging or compiled sources."""
    if install and not is_editable(install):
        return True
    return any(p.endswith(REINSTALL_SUFFIXES) or p.rsplit("/", 1)[-1] in REINSTALL_NAMES
               for p in patches.patch_paths(patch))


def run_tests(sb: Executor, task: Task, recipe: EnvRecipe, *, timeout: float,
              log_dir: Path | None = None, stand_ins: ServiceLines | None = None) -> tuple[grade.TestRun, ExecResult]:
    """Run the eval script (test patch, markers, test command) in ``sb``; the patch is already applied.
    ``stand_ins``: the local stand-ins' start and stop lines (``Prepared.stand_ins``)."""
    existing, created = directives.base_test_files(task.test_patch)
    nonce = evalscript.new_nonce()
    targets = directives.test_directives(task, recipe.test_cmd) if recipe.directives else []
    script = evalscript.make_eval_script(task, recipe, directives=targets,
                                         existing_test_files=existing, created_test_files=created,
                                         nonce=nonce, workdir=sb.workdir, stand_ins=stand_ins)
    sb.write_file("/tmp/sweworld-eval.sh", script)
    result = stateless(sb, "bash /tmp/sweworld-eval.sh", timeout=timeout, cap=TEST_OUTPUT_CAP)
    if log_dir is not None:
        write_atomic(log_dir / EVAL_SCRIPT_FILE, script.replace(nonce, "<nonce>"))
        write_atomic(log_dir / TEST_OUTPUT_FILE, result.output.replace(nonce, "<nonce>"))
    return grade.extract_test_run(result.output, nonce), result


def begin_instance(log_dir: Path, prediction: Prediction) -> tuple[InstanceLog, str | None]:
    """Start an instance's log directory: the unfinished marker first (a kill from here on leaves an
    unfinished instance), last run's test files gone, the patch written; its log and the patch."""
    log_dir.mkdir(parents=True, exist_ok=True)
    clear_report(log_dir)
    for stale in (EVAL_SCRIPT_FILE, TEST_OUTPUT_FILE):
        (log_dir / stale).unlink(missing_ok=True)
    patch = prediction.model_patch
    write_atomic(log_dir / PATCH_FILE, patch or "")
    return InstanceLog(log_dir / LOG_FILE), patch


def evaluate_prepared(task: Task, prediction: Prediction, log_dir: Path, *, prepare: Callable[[], Prepared],
                      timeout: float = timeouts.EVALUATION, audits: dict | None = None) -> InstanceReport:
    """Evaluate ``prediction`` on ``task`` in an episode of ``prepare()``; always returns a report
    (errors included: an ``InfraError`` of ``prepare`` too) and writes it, carrying ``audits`` (a
    hybrid evaluation's counts, ``InstanceReport.audits``) when given."""
    log, patch = begin_instance(log_dir, prediction)
    report = InstanceReport(instance_id=task.instance_id, patch_is_None=patch is None,
                            patch_exists=bool(patch and patch.strip()), patch_successfully_applied=False,
                            resolved=False)
    try:
        _evaluate(task, patch, log_dir, log, report, prepare(), timeout)
    except InfraError as exc:
        report.error, report.error_kind = f"{type(exc).__name__}: {exc}", "infra"
        log(f"infrastructure failure: {exc}")
    finally:
        log.flush()
    report.audits = audits
    write_report(log_dir / REPORT_FILE, report)
    return report


def _evaluate(task: Task, patch: str | None, log_dir: Path, log: InstanceLog, report: InstanceReport,
              prepared: Prepared, timeout: float) -> None:
    log(f"instance {task.instance_id}: repo {task.repo} at {task.base_commit}")
    recipe = prepared.recipe
    if prepared.describe:
        log(prepared.describe)
    with prepared.open() as sb:
        log(f"episode opened ({(sb.info if isinstance(sb, Described) else {}).get('workspace', '?')} workspace)")
        try:
            applied = patches.apply_patch(sb, patch, workdir=sb.workdir, label="model")
        except WorldBrokenError as exc:  # named by the instance, not the episode's directory
            raise WorldBrokenError(exc.message, where=task.instance_id, hint=exc.hint) from exc
        log(applied.log.rstrip() or "empty patch")
        report.apply_method = applied.method
        report.hunks_already_present, report.hunks_rejected = applied.already_present, applied.rejected
        if applied.refused:
            log("patch refused: " + "; ".join(applied.refused))
        if not applied.applied:
            log("patch not applied: the instance is not resolved")
            return
        report.patch_successfully_applied = True
        touched = patches.patch_paths(patch or "")
        reinstall_patched(sb, prepared, patch, task.instance_id, timeout, log)
        run, result = run_tests(sb, task, recipe, timeout=timeout, log_dir=log_dir,
                                stand_ins=prepared.stand_ins)
        log(f"eval script: exit {result.exit_code}, {result.duration:.1f}s"
            + (", timed out" if result.timed_out else ""))
        graded = grade.grade(task, run) if run.markers_found and not run.infra_error else None
        worldcheck.check_eval(task, run, result, graded, test_cmd=recipe.test_cmd, touched=touched, workdir=sb.workdir)
        if result.timed_out:
            report.error, report.error_kind = f"tests timed out after {timeout:.0f}s", "timeout"
            return
        if not run.test_patch_applied:
            raise InfraError("the test patch did not apply to the patched tree", where=task.instance_id,
                             hint="check the instance's test_patch against base_commit")
        graded = graded or grade.grade(task, run)
        report.record_grade(graded)
        if graded.missing:
            log(f"{len(graded.missing)} listed tests missing from the test output (graded as failed): "
                + ", ".join(graded.missing[:20]) + (" ..." if len(graded.missing) > 20 else ""))
        log(f"graded {graded.resolution} (test exit code {run.exit_code}"
            + (", crashed: no test counts as passed" if graded.crashed else "") + ")")


def reinstall_patched(sb: Executor, prepared: Prepared, patch: str | None, instance_id: str, timeout: float,
                      log: Callable[[str], None] = lambda _line: None) -> None:
    """Install the tree again after ``patch`` when it must be (``needs_reinstall``): a validation's gold
    patch as an evaluation's model patch."""
    recipe = prepared.recipe
    if recipe.install and patch and needs_reinstall(patch, recipe.install):
        _reinstall(sb, recipe.install, prepared.build_env, patches.patch_paths(patch), log, instance_id, timeout)


def _reinstall(sb: Executor, install: str, env: dict[str, str], touched: list[str], log: InstanceLog,
               instance_id: str, timeout: float) -> None:
    """Install the patched tree again; a failure is the patch's (its tests show it), unless the
    install command could not start at all (``worldcheck.cannot_start``): a broken world."""
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    result = stateless(sb, f"export {exports}; {install}", timeout=timeout)
    log(f"reinstall of the patched tree ({install}): exit {result.exit_code}")
    if result.ok:
        return
    log(result.output[-2000:])
    line = worldcheck.cannot_start(result.output, result.exit_code, touched=touched, workdir=sb.workdir)
    if line:
        raise worldcheck.broken(f"the install command could not start (exit {result.exit_code}): {line}", instance_id)
