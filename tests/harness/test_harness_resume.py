"""Resume after a kill: an instance counts as done only when every file of it is on disk, report.json
(written last, by rename) included. The leftovers of a kill are made exactly as a kill leaves them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweworld.core.config import EvalConfig, Timeouts
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import InstanceReport, write_report
from sweworld.runs.eval import evaluate_run, load_existing


def finished_dir(root: Path, *, tests_ran: bool) -> Path:
    """An instance directory as ``evaluate_instance`` leaves it when it completes."""
    root.mkdir(parents=True)
    (root / "patch.diff").write_text("diff --git a/x b/x\n")
    (root / "run_instance.log").write_text("[   0.00s] done\n")
    report = InstanceReport(instance_id="org__repo-1", patch_exists=True, patch_successfully_applied=tests_ran,
                            test_exit_code=0 if tests_ran else None, resolved=tests_ran)
    if tests_ran:
        (root / "eval.sh").write_text("#!/bin/bash\n")
        (root / "test_output.txt").write_text("PASSED\n")
    write_report(root, report)
    return root


def test_extras_without_report_json_are_not_a_finished_instance(tmp_path):
    """A kill between the two writes of write_report leaves sweworld_report.json without report.json."""
    directory = finished_dir(tmp_path / "i", tests_ran=True)
    assert load_existing(directory / "report.json") is not None
    (directory / "report.json").unlink()
    assert (directory / "sweworld_report.json").is_file()
    assert load_existing(directory / "report.json") is None


@pytest.mark.parametrize("missing", ["test_output.txt", "eval.sh", "patch.diff", "run_instance.log",
                                     "sweworld_report.json"])
def test_an_instance_missing_any_of_its_files_is_not_finished(tmp_path, missing):
    directory = finished_dir(tmp_path / "i", tests_ran=True)
    (directory / missing).unlink()
    assert load_existing(directory / "report.json") is None


def test_an_instance_whose_tests_never_ran_needs_no_test_files(tmp_path):
    directory = finished_dir(tmp_path / "i", tests_ran=False)
    report = load_existing(directory / "report.json")
    assert report is not None and not report.patch_successfully_applied


def test_extras_of_another_instance_are_not_trusted(tmp_path):
    directory = finished_dir(tmp_path / "i", tests_ran=False)
    (directory / "report.json").write_text(json.dumps({"other__id-2": {"resolved": True}}))
    assert load_existing(directory / "report.json") is None


@pytest.mark.bwrap
@pytest.mark.network
def test_rerun_after_a_kill_between_the_report_writes_writes_report_json(tmp_path):
    from realtasks import real_tasks
    task = real_tasks()["first"]
    preds = {task.instance_id: Prediction(instance_id=task.instance_id, model_name_or_path="org/model",
                                          model_patch=task.patch)}
    run = EvalConfig(run_id="r", logs_dir=tmp_path / "logs", out=tmp_path, timeouts=Timeouts(evaluation=600))
    evaluate_run([task], preds, run, model="org/model")
    directory = tmp_path / "logs/run_evaluation/r/org__model" / task.instance_id
    (directory / "report.json").unlink()  # what a kill after sweworld_report.json, before report.json leaves
    summary, _ = evaluate_run([task], preds, run, model="org/model")
    assert json.loads((directory / "report.json").read_text())[task.instance_id]["resolved"] is True
    assert summary["completed_instances"] == 1 and summary["resolved_ids"] == [task.instance_id]
