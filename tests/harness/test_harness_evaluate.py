"""The harness end to end on real instances (more-itertools from PyPI, real bugs, real tests)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from realtasks import FIRST_BUG, ILEN_BUG, MODULE, real_tasks, sources, unified
from sweworld.backends.real import RealBackend, evaluate_instance
from sweworld.core.config import EvalConfig, Timeouts
from sweworld.envs import EnvBuilder
from sweworld.harness.predictions import Prediction
from sweworld.runs.eval import evaluate_run
from sweworld.tasks import save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]


@pytest.fixture(scope="module")
def tasks():
    return real_tasks()


@pytest.fixture(scope="module")
def builder():
    return EnvBuilder()


def evaluate(task, patch, tmp_path, builder):
    prediction = Prediction(instance_id=task.instance_id, model_name_or_path="test", model_patch=patch)
    return evaluate_instance(task, prediction, tmp_path / uuid.uuid4().hex[:8], builder=builder, timeout=600)


def test_gold_resolves_and_writes_swebench_layout(tasks, builder, tmp_path):
    task = tasks["first"]
    report = evaluate(task, task.patch, tmp_path, builder)
    assert report.error is None, report.error
    assert report.patch_successfully_applied and report.resolved and report.resolution == "RESOLVED_FULL"
    status = report.tests_status
    assert sorted(status["FAIL_TO_PASS"]["success"]) == sorted(task.FAIL_TO_PASS)
    assert status["PASS_TO_PASS"]["failure"] == []
    log_dir = next(tmp_path.iterdir())
    for name in ("patch.diff", "eval.sh", "test_output.txt", "report.json", "run_instance.log"):
        assert (log_dir / name).is_file(), name
    on_disk = json.loads((log_dir / "report.json").read_text())
    assert on_disk[task.instance_id]["resolved"] is True
    assert set(report.to_swebench()[task.instance_id]) == {
        "patch_is_None", "patch_exists", "patch_successfully_applied", "resolved", "tests_status"}


def test_empty_patch_is_not_resolved(tasks, builder, tmp_path):
    report = evaluate(tasks["first"], "", tmp_path, builder)
    assert not report.patch_exists and not report.patch_successfully_applied and not report.resolved
    assert evaluate(tasks["first"], None, tmp_path, builder).patch_is_None


def test_wrong_patch_is_not_resolved(tasks, builder, tmp_path):
    buggy, _ = sources(tasks["first"])
    wrong = buggy.replace("            return iterable[-1]", "            return iterable[-1]  # changed")
    report = evaluate(tasks["first"], unified(MODULE, buggy, wrong), tmp_path, builder)
    assert report.patch_successfully_applied and not report.resolved
    assert report.resolution == "RESOLVED_NO"
    assert sorted(report.tests_status["FAIL_TO_PASS"]["failure"]) == sorted(tasks["first"].FAIL_TO_PASS)


def test_partial_fix_is_partial(tasks, builder, tmp_path):
    task = tasks["two"]
    buggy, _ = sources(task)
    half = buggy.replace(ILEN_BUG[1], ILEN_BUG[0])  # fixes ilen() only
    report = evaluate(task, unified(MODULE, buggy, half), tmp_path, builder)
    assert report.resolution == "RESOLVED_PARTIAL" and not report.resolved
    assert report.tests_status["FAIL_TO_PASS"]["success"] == ["tests/test_more.py::IlenTests::test_ilen"]


def test_malformed_patch_is_not_applied(tasks, builder, tmp_path):
    report = evaluate(tasks["first"], "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ nonsense @@\n+y\n", tmp_path, builder)
    assert report.patch_exists and not report.patch_successfully_applied and not report.resolved


def test_fuzzy_patch_applies_through_the_fallback(tasks, builder, tmp_path):
    task = tasks["first"]
    gold = task.patch
    # a context line that does not match the tree: git apply refuses, patch --fuzz accepts
    context = next(line for line in gold.splitlines() if line.startswith(" ") and "first()" not in line
                   and line.strip())
    fuzzy = gold.replace(context + "\n", context + "  # drifted\n", 1)
    report = evaluate(task, fuzzy, tmp_path, builder)
    assert report.patch_successfully_applied and report.apply_method == "patch --fuzz"
    assert report.resolved


def test_path_traversal_patch_is_refused_and_host_untouched(tasks, builder, tmp_path):
    target = f"sweworld-escape-{uuid.uuid4().hex}"
    escape = unified(f"../../../../../../tmp/{target}", "", "owned\n")
    report = evaluate(tasks["first"], escape, tmp_path, builder)
    assert not report.patch_successfully_applied and not report.resolved
    assert not Path("/tmp", target).exists()
    log = next(p for p in tmp_path.iterdir() if (p / "report.json").exists()) / "run_instance.log"
    assert "refused" in log.read_text()


def test_printing_passed_and_crashing_is_not_resolved(tasks, builder, tmp_path):
    task = tasks["first"]
    forged = "".join(f"    print('PASSED {t}')\n" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)
    conftest = f"import os\n\n\ndef pytest_sessionfinish(session):\n{forged}    os._exit(3)\n"
    report = evaluate(task, unified("tests/conftest.py", "", conftest), tmp_path, builder)
    assert report.patch_successfully_applied
    assert not report.resolved and report.crashed and report.test_exit_code == 3


def test_test_patch_instance_resolves_and_tests_are_reverted(tasks, builder, tmp_path):
    task = tasks["test_patch"]
    assert evaluate(task, task.patch, tmp_path, builder).resolved
    assert not evaluate(task, "", tmp_path, builder).resolved


def _write_inputs(tmp_path, tasks, patches):
    dataset = tmp_path / "dataset.jsonl"
    save_tasks(list(tasks), dataset)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": t.instance_id, "model_name_or_path": "org/model",
                                         "model_patch": p}) + "\n" for t, p in zip(tasks, patches, strict=True)))
    return dataset, preds


def test_rerun_gives_identical_reports(tasks, builder, tmp_path):
    chosen = [tasks["first"], tasks["two"]]
    preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path="org/model",
                                       model_patch=t.patch) for t in chosen}
    first, path = evaluate_run(chosen, preds,
                               EvalConfig(run_id="r1", logs_dir=tmp_path / "logs", out=tmp_path, timeouts=Timeouts(evaluation=600)),
                               model="org/model", backend=RealBackend(builder))
    reports = {p: p.read_bytes() for p in (tmp_path / "logs").rglob("report.json")}
    second, _ = evaluate_run(chosen, preds,
                             EvalConfig(run_id="r1", logs_dir=tmp_path / "logs", out=tmp_path, force=True, timeouts=Timeouts(evaluation=600)),
                             model="org/model", backend=RealBackend(builder))
    assert len(reports) == 2 and {p: p.read_bytes() for p in reports} == reports
    assert first == second and first["resolved_instances"] == 2
    assert path == tmp_path / "org__model.r1.json"
    assert (tmp_path / "logs/run_evaluation/r1/org__model" / chosen[0].instance_id / "report.json").exists()


@pytest.mark.slow
def test_killed_run_resumes_without_redoing_finished_instances(tasks, tmp_path):
    chosen = [tasks["first"], tasks["two"], tasks["test_patch"]]
    dataset, preds = _write_inputs(tmp_path, chosen, [t.patch for t in chosen])
    cli = [sys.executable, "-m", "sweworld.cli.app", "eval", "--dataset", str(dataset), "--predictions", str(preds),
           "--run-id", "resume", "--logs-dir", str(tmp_path / "logs"), "--out", str(tmp_path)]
    base = tmp_path / "logs/run_evaluation/resume/org__model"
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while not list(base.glob("*/report.json")) and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = {p: p.stat().st_mtime_ns for p in base.glob("*/report.json")}
    assert 1 <= len(done) < 3
    rerun = subprocess.run(cli, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert {p: p.stat().st_mtime_ns for p in done} == done
    summary = json.loads((tmp_path / "org__model.resume.json").read_text())
    assert summary["completed_instances"] == 3 and summary["resolved_instances"] == 3
    assert sorted(summary["resolved_ids"]) == sorted(t.instance_id for t in chosen)


def test_first_bug_constants_match_the_release():
    # the bug strings must still be found in the real release (guards the fixtures above)
    assert FIRST_BUG[0] != FIRST_BUG[1] and ILEN_BUG[0] != ILEN_BUG[1]



BROKEN_CHECKOUT = ["mkdir -p .git/hooks", "printf '#!/bin/sh\\nexit 1\\n' > .git/hooks/post-checkout",
                   "chmod +x .git/hooks/post-checkout"]  # git checkout exits with the hook's status


def test_a_broken_apply_chain_is_an_infra_error_and_the_run_goes_on(tasks, tmp_path):
    """When the tree cannot be put back after a failed apply attempt, PatchApplyError used to escape
    evaluate_instance and end the whole run with no summary. Now that instance is an infrastructure
    error (retried by a rerun) and the other instance is graded."""
    # an environment of its own: the instance stage of a shared one runs the recipe that built it
    first = tasks["first"].model_copy(update={"pre_install": BROKEN_CHECKOUT, "pip_packages": ["pytest"]})
    two = tasks["two"]
    fails = first.patch + unified("tests/test_more.py", "no such line in the file\n", "x\n")
    dataset, preds = _write_inputs(tmp_path, [first, two], [fails, two.patch])
    done = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "eval", "--dataset", str(dataset),
                           "--predictions", str(preds), "--run-id", "chain", "--logs-dir", str(tmp_path / "logs"),
                           "--out", str(tmp_path)], capture_output=True, text=True)
    assert "Traceback" not in done.stderr, done.stderr
    summary = json.loads((tmp_path / "org__model.chain.json").read_text())
    assert summary["resolved_ids"] == [two.instance_id]
    assert summary["infra_error_ids"] == [first.instance_id]
    report = json.loads((tmp_path / "logs/run_evaluation/chain/org__model" / first.instance_id
                         / "sweworld_report.json").read_text())
    assert report["error_kind"] == "infra" and "could not restore the tree" in report["error"]
