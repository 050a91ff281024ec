"""An SWR evaluation laid out as a real one: ``patch.diff``, ``run_instance.log``, ``eval.sh`` (what
would have run), ``test_output.txt`` (the predicted test report), ``report.json`` (written last) and
``sweworld_report.json`` (with the ``sim_*`` fields), so resume, summaries and comparisons treat sim
runs exactly as real ones. A simulated world that cannot answer (SWR's endpoint down after its
retries: ``ModelError``; no valid reply: ``world.swr``; a world or infrastructure error) gives an
infrastructure report (``error_kind="infra"``), never "unresolved"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sweworld.core.errors import InfraError, ModelError, WorldError
from sweworld.core.types import Task
from sweworld.harness.evaluate import begin_instance
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import (
    EVAL_SCRIPT_FILE,
    TEST_OUTPUT_FILE,
    InstanceReport,
    write_atomic,
    write_report,
)
from sweworld.world.context import test_command
from sweworld.world.swr import SWR
from sweworld.world.testfiles import Workspace


def evaluate_simulated(task: Task, prediction: Prediction, log_dir: Path, *, swr: SWR,
                       open_workspace: Callable[[], Workspace]) -> InstanceReport:
    """SWR's report of ``prediction`` (always a report, errors included), written to ``log_dir``."""
    report = simulated_report(task, prediction, log_dir, swr=swr, open_workspace=open_workspace)
    write_report(log_dir, report)
    return report


def simulated_report(task: Task, prediction: Prediction, log_dir: Path, *, swr: SWR,
                     open_workspace: Callable[[], Workspace]) -> InstanceReport:
    """``evaluate_simulated`` but for the report itself: ``log_dir`` holds the other files and no
    report (the caller writes it, ``write_report``: a caller that adds to it writes it once)."""
    log, patch = begin_instance(log_dir, prediction)
    log(f"instance {task.instance_id}: repo {task.repo} at {task.base_commit} (simulated: SWR, {swr.config.style} "
        f"prompts, k={swr.config.k})")
    try:
        with open_workspace() as workspace:
            report = swr.evaluate(task, patch, workspace)
    except (InfraError, WorldError, ModelError) as exc:  # SWR unreachable or unusable: the world's failure
        report = InstanceReport.build(task.instance_id, patch, error=f"{type(exc).__name__}: {exc}")
    if report.error:
        log(f"no verdict: {report.error}")
    elif report.test_exit_code is not None:
        write_atomic(log_dir / EVAL_SCRIPT_FILE, f"# simulated by SWR; the test command it predicted:\n"
                                                 f"{test_command(task)}\n")
        write_atomic(log_dir / TEST_OUTPUT_FILE, getattr(report, "sim_test_report", "") or "")
        log(f"predicted {report.resolution} (P(resolved) {getattr(report, 'sim_probability', None)})")
    else:
        log("patch empty or not applicable: not resolved (no model call)")
    log.flush()
    return report
