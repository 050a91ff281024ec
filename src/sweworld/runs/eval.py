"""A whole evaluation run: parallel, resumable, laid out like SWE-bench's.

``logs/run_evaluation/<run_id>/<model>/<instance_id>/{patch.diff, eval.sh, test_output.txt,
report.json, run_instance.log}`` and the summary ``<model>.<run_id>.json``. An instance whose
files are all there is not evaluated again unless ``force`` (``report.json`` is written last, by
rename, so a kill mid-instance leaves it out); a report of an infrastructure failure is retried
(the failure was not the model's).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from sweworld.backends import Backend, audits
from sweworld.core import names
from sweworld.core.config import EvalConfig
from sweworld.core.types import Task
from sweworld.harness.predictions import Prediction, model_dir_name, model_name
from sweworld.harness.report import REPORT_FILE, InstanceReport, is_finished, summarize
from sweworld.parallel import shipping
from sweworld.parallel.map import map_items
from sweworld.parallel.runner import EVALUATION, Runner, environment_group, runner_of

log = logging.getLogger(__name__)


def run_dir(root: Path, run_id: str, model: str) -> Path:
    """``root/run_evaluation/<run_id>/<model dir>``; DatasetError when a name cannot be a directory."""
    return root / "run_evaluation" / names.check(run_id, what="run id") / model_dir_name(model)


def load_existing(path: Path) -> InstanceReport | None:
    """The report of a finished instance (every file present, report.json written last; not an
    infrastructure failure) or None."""
    report = is_finished(path.parent if path.name == REPORT_FILE else path)
    return None if report is None or report.error_kind == "infra" else report


def evaluate_item(item: tuple[Task, Prediction, Path], backend: Backend, *, timeout: float) -> InstanceReport:
    """One item of a run: ``backend.evaluate`` of (task, prediction, its log directory), the logs
    written where the item runs and landed in that directory by the driver (``shipping``)."""
    task, prediction, path = item
    return backend.evaluate(task, prediction, shipping.stage(path, last=REPORT_FILE), timeout=timeout)


def evaluate_run(tasks: list[Task], predictions: dict[str, Prediction], config: EvalConfig | None = None, *,
                 model: str | None = None, backend: Backend | None = None,
                 on_done: Callable[[InstanceReport], None] | None = None,
                 runner: Runner | None = None) -> tuple[dict, Path]:
    """Evaluate every task that has a prediction as ``config`` says (run id, logs and summary
    directories, ``timeouts.evaluation``, workers, force) with ``backend`` (default: the one
    ``config.backend`` describes) on ``runner`` (default: ``config.runner``'s); ``model``: the
    predictions' (default: their ``model_name_or_path``). Returns (summary, summary path)."""
    config = config or EvalConfig()
    run_id, logs_root, summary_dir, force = config.run_id, config.logs_dir, config.out, config.force
    workers, timeout = config.runner.workers, config.timeouts.evaluation
    model = model or model_name(predictions)
    if backend is None:
        from sweworld.backends import make_backend
        backend = make_backend(config.backend, timeouts=config.timeouts)
    runner = runner or runner_of(config.runner)
    base = run_dir(logs_root, run_id, model)
    reports: dict[str, InstanceReport] = {}
    todo = []
    for task in tasks:
        if task.instance_id not in predictions:
            continue
        names.check(task.instance_id, what="instance_id")  # before any path is made of it
        existing = None if force else load_existing(base / task.instance_id / "report.json")
        if existing is not None:
            reports[task.instance_id] = existing
            if on_done:
                on_done(existing)
        else:
            todo.append(task)

    def finished(_item: tuple[Task, Prediction, Path], report: InstanceReport) -> None:
        reports[report.instance_id] = report
        if on_done:
            on_done(report)

    map_items([(task, predictions[task.instance_id], base / task.instance_id) for task in todo],
              partial(evaluate_item, timeout=timeout), runner=runner, workers=workers, hints=EVALUATION,
              group=lambda item: environment_group(item[0]), share=backend, on_done=finished)
    summary = summarize([t.instance_id for t in tasks], reports,
                        {k: v.model_patch for k, v in predictions.items()}, run_id=run_id, model=model)
    summary.update(audits.summary_part(reports.values()))
    summary_dir.mkdir(parents=True, exist_ok=True)
    path = summary_dir / f"{model_dir_name(model)}.{run_id}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=4, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return summary, path
