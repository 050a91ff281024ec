"""The embedded SWR: features of hand-made patches against a gold revert, the pure-Python
classifier and its JSON, the shipped model, ``EmbeddedSWR`` as SWR (graded by the harness) and as
the embedded SWT's predictor; with a sandbox: trained on real evaluations of perturbed patches,
and evaluating through ``SimBackend`` into the harness's layout."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from world_tasks import BUGGY as CALC_BUGGY
from world_tasks import calc_task, world_model

from realtasks import MODULE, real_tasks, sources, unified
from sweworld.cli.app import app
from sweworld.core.errors import ModelError
from sweworld.core.types import Task
from sweworld.harness.predictions import Prediction
from sweworld.surrogates.swr import FEATURES, EmbeddedSWR, SWRClassifier, features, fit
from sweworld.surrogates.swr.patched import apply_patch_text
from sweworld.surrogates.swr.predict import decide, repo_sources
from sweworld.surrogates.swr.train import train
from sweworld.surrogates.swt.predictor import load_predictor
from sweworld.world.swt import SWT
from sweworld.world.traces import TraceStore

PATH, TEST = "clamp/core.py", "tests/test_clamp.py"
FIXED = ("def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n\n\n"
         "def scale(values, factor):\n    return [v * factor for v in values]\n")
BUGGY = FIXED.replace("return hi", "return lo")
TESTS = "from clamp.core import clamp\n\n\ndef test_high():\n    assert clamp(5, 0, 3) == 3\n"
FILES = {PATH: BUGGY, TEST: TESTS}
TASK = Task(instance_id="local__clamp-1", repo="local/clamp", base_commit="0" * 40, patch=unified(PATH, BUGGY, FIXED),
            FAIL_TO_PASS=[f"{TEST}::test_high"], PASS_TO_PASS=[f"{TEST}::test_low"])
VARIANTS = {  # name: (patched module, resolves)
    "revert": (FIXED, True),
    "same_code_other_text": (FIXED.replace("return hi", "return (hi)  # the upper bound"), True),
    "another_mutation": (FIXED.replace("x < lo", "x <= lo").replace("return lo", "return lo + 1"), False),
    "bug_kept_elsewhere": (BUGGY.replace("v * factor", "v + factor"), False),
    "partial_wrong_value": (BUGGY.replace("return lo\n    return x", "return hi - 1\n    return x"), False),
}


def read(path: str) -> str | None:
    return FILES.get(path)


def patch_of(text: str) -> str:
    return unified(PATH, BUGGY, text)


@pytest.fixture(scope="module")
def table():
    return {name: features(TASK, patch_of(text), read) for name, (text, _) in VARIANTS.items()}


def test_the_gold_revert_is_recognized_on_tokens_and_on_the_ast(table):
    revert, same = table["revert"], table["same_code_other_text"]
    assert set(revert) == set(FEATURES)
    assert (revert["modules_equal"], revert["gold_funcs_equal"], revert["lines_jaccard"], revert["lines_off_gold"]) == (1, 1, 1, 0)
    assert (same["modules_equal"], same["gold_funcs_equal"]) == (1, 1) and same["lines_jaccard"] < 1
    assert revert["syntax_ok"] == revert["applies"] == 1 and revert["tests_modified"] == 0


def test_other_edits_score_lower_and_say_how(table):
    mutated, kept = table["another_mutation"], table["bug_kept_elsewhere"]
    assert mutated["gold_funcs_equal"] == 0 and 0.5 < mutated["gold_funcs_similarity"] < 1
    assert mutated["gold_funcs_unchanged"] == 0 and mutated["funcs_jaccard"] == 1
    assert kept["gold_funcs_unchanged"] == 1 and kept["extra_funcs"] > 0 and kept["funcs_jaccard"] == 0
    assert kept["gold_funcs_similarity"] < table["revert"]["gold_funcs_similarity"]
    assert all(table[n]["modules_equal"] == 0 and table[n]["lines_off_gold"] > 0 for n in ("another_mutation", "bug_kept_elsewhere"))
    assert table["another_mutation"]["funcs_named_in_tests"] == 1.0  # clamp is what the failing test calls


def test_syntax_errors_test_edits_and_empty_patches_are_seen():
    broken = features(TASK, patch_of(FIXED.replace("return hi", "return hi)")), read)
    assert broken["syntax_ok"] == 0 and broken["applies"] == 1
    assert decide(EmbeddedSWR().model, TASK, patch_of(FIXED.replace("return hi", "return hi)")), read)[0] == 0.0
    tests_too = TASK.patch + unified(TEST, TESTS, TESTS + "\n\ndef test_low():\n    assert clamp(-1, 0, 3) == 0\n")
    assert features(TASK, tests_too, read)["tests_modified"] == 1
    assert features(TASK, "", read) == {**dict.fromkeys(FEATURES, 0.0), "empty": 1.0}


def test_patches_apply_in_memory_at_an_offset_and_refuse_a_wrong_context():
    shifted = {PATH: "# a header line\n" * 3 + BUGGY}
    got = apply_patch_text(TASK.patch, shifted.get)
    assert got.applied and got.after[PATH] == "# a header line\n" * 3 + FIXED
    wrong = apply_patch_text(TASK.patch, {PATH: FIXED.replace("x > hi", "x >= hi")}.get)
    assert not wrong.applied and wrong.after[PATH] == FIXED.replace("x > hi", "x >= hi")


def test_the_classifier_learns_saves_and_loads(table, tmp_path):
    names = list(table)
    model = fit([table[n] for n in names], [VARIANTS[n][1] for n in names], FEATURES)
    scores = {n: model.probability(table[n]) for n in names}
    assert all((scores[n] >= 0.5) == VARIANTS[n][1] for n in names)
    loaded = SWRClassifier.load(model.save(tmp_path / "m.json"))
    assert {n: loaded.probability(table[n]) for n in names} == scores
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ModelError):
        SWRClassifier.load(tmp_path / "bad.json")
    with pytest.raises(ModelError):
        fit([table["revert"]], [True], FEATURES)


def test_the_shipped_model_loads_and_separates_the_revert_from_a_mutation(table):
    swr = EmbeddedSWR(sources=lambda task: read)
    assert swr.model.meta["evaluations"] > 0 and set(swr.model.features) <= set(FEATURES)
    assert swr.model.calibration and swr.model_for(TASK) is swr.model  # no test patch: synthesized
    real = TASK.model_copy(update={"test_patch": unified(TEST, TESTS, TESTS + "\n\ndef test_more():\n    pass\n")})
    assert swr.model_for(real) is swr.real_model and swr.real_model.meta["held_out"]["n"] == 200
    assert swr.model.probability(table["revert"]) > 0.5 > swr.model.probability(table["another_mutation"])
    statuses = swr.predict(TASK, patch_of(FIXED), [*TASK.FAIL_TO_PASS, "tests/test_other.py::test_x"])
    assert [s for s, _ in statuses.values()] == ["PASSED", "PASSED"] and all(0.5 <= c <= 1 for _, c in statuses.values())
    assert swr.predict(TASK, patch_of(VARIANTS["another_mutation"][0]), TASK.FAIL_TO_PASS)[TASK.FAIL_TO_PASS[0]][0] == "FAILED"
    assert isinstance(load_predictor("sweworld.surrogates.swr:predictor"), EmbeddedSWR)


def test_evaluate_is_graded_by_the_harness_and_decides_like_swr(tmp_path):
    executor, task = calc_task(tmp_path)
    swr = EmbeddedSWR()
    gold = swr.evaluate(task, task.patch, executor)
    assert gold.resolved and gold.sim_probability > 0.5 and gold.patch_successfully_applied
    assert gold.tests_status["FAIL_TO_PASS"]["success"] == task.FAIL_TO_PASS
    assert f"PASSED {task.FAIL_TO_PASS[0]}" in gold.sim_test_report and gold.sim_graded_from == ["report"]
    # a real instance (it has a test patch) is judged by the model of real agent patches, which
    # cannot tell `a * b` from `a + b` (one token off the gold): the wrong patch keeps the bug and
    # adds a function beside it
    wrong = swr.evaluate(task, unified("pkg/__init__.py", CALC_BUGGY, CALC_BUGGY + "\n\ndef mul(a, b):\n    return a * b\n"),
                         executor)
    assert not wrong.resolved and wrong.tests_status["FAIL_TO_PASS"]["failure"] == task.FAIL_TO_PASS
    assert wrong.tests_status["PASS_TO_PASS"]["success"] == task.PASS_TO_PASS
    refused = swr.evaluate(task, task.patch.replace("a - b", "a / b"), executor)
    assert (refused.resolved, refused.patch_successfully_applied, refused.sim_probability) == (False, False, 0.0)
    assert swr.evaluate(task, "", executor).sim_probability == 0.0


# --- with a sandbox: real evaluations ----------------------------------------------------------------

def _perturbed(task: Task) -> dict[str, str]:
    """Patches of ``task`` (more-itertools' first()): the gold revert, the same fix written another
    way, the fix plus a mutation, a partial fix of the two-bug instance."""
    buggy, fixed = sources(task)
    out = {"gold": task.patch,
           "rewritten": unified(MODULE, buggy, fixed.replace("    if default is _marker:", "    if _marker is default:")),
           "mutated_fix": unified(MODULE, buggy, fixed.replace("    return default\n", "    return None\n", 1))}
    if "ilen" in task.instance_id:
        out["partial"] = unified(MODULE, buggy, buggy.replace("is not _marker", "is _marker", 1))
    return out


@pytest.fixture(scope="module")
def real_traces(tmp_path_factory):
    """Real evaluations (the harness in sandboxes) of perturbed patches of two instances."""
    from sweworld.backends.real import RealBackend

    root = tmp_path_factory.mktemp("swr-real")
    backend = RealBackend(traces=root / "traces.jsonl")
    tasks = [real_tasks()["first"], real_tasks()["two"]]
    for task in tasks:
        for name, patch in _perturbed(task).items():
            backend.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=patch), root / "eval" / f"{task.instance_id}.{name}")
    return root, TraceStore(root / "traces.jsonl").evals(), tasks


@pytest.mark.bwrap
@pytest.mark.network
def test_trained_on_real_evaluations_of_perturbed_patches(real_traces, tmp_path):
    root, evals, _ = real_traces
    labels = {(t.instance_id, t.patch): t.resolved for t in evals}
    assert len(evals) == 7 and 0 < sum(labels.values()) < len(labels)  # the harness says both
    model, report = train(evals, repo_sources(), test_fraction=0.0)
    assert report["decided_by_classifier"] == 7 and model.meta["resolved"] == sum(labels.values())
    assert report["train"]["accuracy"] >= 6 / 7
    result = CliRunner().invoke(app, ["world", "train", "-t", str(root), "--test-fraction", "0",
                                      "-o", str(tmp_path / "m.json"), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert "embedded SWR" in result.output and "faster than the real evaluation it replaces" in result.output
    loaded = SWRClassifier.load(tmp_path / "m.json")
    assert loaded.weights == pytest.approx(model.weights) and json.loads((tmp_path / "r.json").read_text())["speed"]["speedup"] > 1


@pytest.mark.bwrap
@pytest.mark.network
def test_sim_backend_with_the_embedded_swr_writes_the_harness_layout(real_traces, tmp_path):
    from sweworld.backends.sim import SimBackend

    _, evals, tasks = real_traces
    sim = SimBackend(swt=SWT(world_model("http://127.0.0.1:9/v1")), swr=EmbeddedSWR())  # SWT unused: no episode
    for trace in evals:
        task = next(t for t in tasks if t.instance_id == trace.instance_id)
        out = tmp_path / str(abs(hash(trace.patch)))
        report = sim.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=trace.patch), out)
        saved = json.loads((out / "report.json").read_text())[task.instance_id]
        assert saved["resolved"] == report.resolved and report.sim_probability is not None
        assert "short test summary info" in (out / "test_output.txt").read_text()
        if trace.patch == task.patch:
            assert report.resolved and saved["tests_status"]["FAIL_TO_PASS"]["success"] == task.FAIL_TO_PASS
    empty = sim.evaluate(tasks[0], Prediction(instance_id=tasks[0].instance_id, model_patch=""), tmp_path / "empty")
    assert not empty.resolved and not (tmp_path / "empty" / "test_output.txt").exists()


OTHER = "clamp/util.py"
UTIL = "def double(x):\n    return 2 * x\n"


def test_a_patch_that_leaves_the_gold_files_alone_is_not_the_gold():
    """Regression: files the gold patch changes and the agent's leaves alone were dropped from the
    AST views, so a comment in another file scored modules_equal=1 and was predicted resolved."""
    files = {**FILES, OTHER: UTIL}
    comment = unified(OTHER, UTIL, "# a note\n" + UTIL)
    values = features(TASK, comment, files.get)
    assert (values["modules_equal"], values["gold_funcs_unchanged"], values["funcs_jaccard"]) == (0, 1, 0)
    assert values["executable"] == 0
    assert decide(EmbeddedSWR().model, TASK, comment, files.get)[0] == 0.0
    assert features(TASK, TASK.patch + comment, files.get)["modules_equal"] == 1


def test_a_method_added_at_the_end_of_a_class_keeps_the_class():
    """Regression: the blank lines after a class belong to no statement, so a method inserted there
    was parsed without its class ("unexpected indent") and the gold patch judged a syntax error;
    files are now compared whole."""
    path = "shapes.py"
    base = "class Square:\n    def __init__(self, side):\n        self.side = side\n\n\ndef unit():\n    return Square(1)\n"
    fixed = base.replace("        self.side = side\n\n",
                         "        self.side = side\n\n    def area(self):\n        return self.side ** 2\n\n")
    task = TASK.model_copy(update={"patch": unified(path, base, fixed), "FAIL_TO_PASS": ["tests/test_shapes.py::test_area"]})
    values = features(task, task.patch, {path: base}.get)
    assert values["syntax_ok"] == 1 and values["modules_equal"] == 1 and values["executable"] == 1
    assert decide(EmbeddedSWR().model, task, task.patch, {path: base}.get)[0] > 0
