"""The embedded SWT: exact replay, structured test output compared with real runs of the same
state, nearest-neighbour fallback, the WorldModel adapter in both prompt styles, and (with a
sandbox) real traces of shipped instances scored on repositories left out of fitting."""

from __future__ import annotations

import re

import pytest

from sweworld.agents.explorer import reproduction_script
from sweworld.core.types import Task
from sweworld.surrogates.swt import EmbeddedSWT, GoldTouchPredictor
from sweworld.surrogates.swt.adapter import context_from_messages
from sweworld.surrogates.swt.affected import affected_tests
from sweworld.surrogates.swt.evaluate import held_out, leave_one_repo_out, score
from sweworld.surrogates.swt.predictor import touches
from sweworld.surrogates.swt.shellfilters import apply_filters
from sweworld.surrogates.swt.structured import SWTPrediction
from sweworld.surrogates.swt.testcmd import keyword_matches, parse_script_command, parse_test_command
from sweworld.world.context import swt_context
from sweworld.world.fidelity import measure
from sweworld.world.metrics import similarity
from sweworld.world.parse import SWTOutput
from sweworld.world.swr import SWR
from sweworld.world.swt import SWT, SWTConfig, to_result
from sweworld.world.templates import styles
from sweworld.world.traces import StepTrace, TraceStore
from sweworld.world.worldmodels import create_model
from world_embedded import BUGGY, FIXED, PY, PYTEST, collect, local_episode, shipped_tasks


def _mask(text: str) -> str:
    return re.sub(r"\d+\.\d+s\b", "N s", text)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("local")
    store = TraceStore(root / "traces.jsonl")
    executor, task = local_episode(root / "tree", store)
    return executor, task, store.load()


@pytest.fixture
def local(recorded):
    """(executor at the base commit, task, recorded traces, model fitted on them with the import graph)."""
    executor, task, traces = recorded
    yield executor, task, traces, EmbeddedSWT.fit(traces, trees=lambda task: executor.root)
    executor.write_file("pkg/__init__.py", BUGGY)


def test_recorded_steps_replay_exactly_and_survive_save_and_load(local, tmp_path):
    _, _, traces, model = local
    steps = [t for t in traces if isinstance(t, StepTrace)]
    for name in ("model.json", "model.json.gz"):
        loaded = EmbeddedSWT.load(model.save(tmp_path / name))
        for step in steps:
            got = loaded.predict(step.context)
            assert (got.source, got.confidence) == ("replay", 1.0)
            assert (got.output.stdout, got.output.exit_code) == (step.output, step.exit_code)
    assert (tmp_path / "model.json").read_text().startswith('{"format":"sweworld-embedded-swt/1"')


MODES = ["-rA", "", "-q -x", "-q --tb=no", "-q -k 'zero or neg'", "-v tests/test_add.py::TestMore",
         "-q tests/test_other.py tests/test_add.py::test_zero", "-q tests/test_nope.py", "-q tests 2>&1 | tail -4"]


@pytest.mark.parametrize("fixed", [False, True], ids=["base", "gold"])
@pytest.mark.parametrize("mode", MODES)
def test_structured_pytest_output_is_what_pytest_prints_for_the_same_state(local, mode, fixed):
    executor, task, _, model = local
    model.replay = False
    if fixed:
        executor.write_file("pkg/__init__.py", FIXED)
    command = f"{PYTEST} {mode}" + ("" if "tests" in mode else " tests")
    got = model.predict(swt_context(task, command, executor))
    real = executor.run(command)
    assert got.source == "tests" and 0 < got.confidence < 1
    assert got.output.exit_code == real.exit_code
    assert _mask(to_result(got.output).output) == _mask(real.output)


@pytest.mark.parametrize("mode", ["-q --tb=short", "-q --tb=line"])
def test_other_traceback_styles_are_close_to_what_pytest_prints(local, mode):
    executor, task, _, model = local
    model.replay = False
    got, real = model.predict(swt_context(task, f"{PYTEST} {mode} tests", executor)), executor.run(f"{PYTEST} {mode} tests")
    assert got.output.exit_code == real.exit_code == 1
    summary = [line for line in real.output.splitlines() if line.startswith("FAILED ")]
    assert [line for line in got.output.stdout.splitlines() if line.startswith("FAILED ")] == summary
    assert similarity(got.output.stdout, real.output) > 0.85


def test_unittest_output_is_what_unittest_prints(local):
    executor, task, _, model = local
    model.replay = False
    command = f"{PY} -m unittest tests.test_add"
    got, real = model.predict(swt_context(task, command, executor)), executor.run(command)
    assert (got.source, got.output.exit_code) == ("tests", real.exit_code) == ("tests", 1)
    assert _mask(to_result(got.output).output) == _mask(real.output)


def test_touched_tests_go_to_the_predictor_and_the_others_keep_their_baseline(local):
    executor, task, _, model = local
    model.replay = False

    class Pessimist:
        def predict(self, task, diff, test_ids):
            return {t: ("FAILED", 0.3) for t in test_ids}

    executor.write_file("pkg/__init__.py", BUGGY.replace("a * b", "b * a"))  # touches pkg, not the gold hunk
    tests = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    graph = model.data.repos[task.repo].graph
    assert graph["tests/test_add.py"] == ["pkg/__init__.py"] and graph["tests/test_other.py"] == []
    assert affected_tests(tests, executor.diff(), graph=graph) == set(tests) - {"tests/test_other.py::test_one"}
    texts = {"tests/test_add.py": "from pkg import add\n", "tests/test_other.py": "import os\n"}
    assert affected_tests(tests, executor.diff(), texts=texts) == set(tests) - {"tests/test_other.py::test_one"}
    assert not touches(executor.diff(), task.patch)
    default = GoldTouchPredictor().predict(task, executor.diff(), tests)
    assert {t for t, (s, c) in default.items() if s == "FAILED"} == set(task.FAIL_TO_PASS)
    assert {c for _, c in default.values()} == {0.5}
    model.predictor = Pessimist()
    got = model.predict(swt_context(task, f"{PYTEST} -rA tests", executor))
    assert got.confidence == pytest.approx(0.3 * 0.9) and got.detail["why"] == {"predicted": 4, "baseline": 1}
    assert "PASSED tests/test_other.py::test_one" in got.output.stdout and "4 failed, 1 passed" in got.output.stdout


def test_other_commands_get_the_nearest_recorded_step_with_its_similarity(local):
    executor, task, _, model = local
    got = model.predict(swt_context(task, f"{PY} reproduce.py --verbose", executor))
    assert got.source == "neighbour" and 0.5 < got.confidence < 1
    assert (got.output.stdout, got.output.exit_code) == ("-1\n", 0)  # the recorded run at the same state
    far = model.predict(swt_context(task, "make docs", executor))
    assert far.source == "none" and far.confidence == 0.0


@pytest.mark.parametrize("edit", ["none", "gold", "elsewhere"])
def test_scripts_that_run_tests_by_id_exit_as_those_tests_would(local, edit):
    executor, task, _, model = local
    script = reproduction_script("pkg/__init__.py", "add", task.FAIL_TO_PASS)
    executor.write_file("repro_issue.py", script)
    if edit == "gold":
        executor.write_file("pkg/__init__.py", FIXED)
    elif edit == "elsewhere":
        executor.write_file("pkg/extra.py", "def sub(a, b):\n    return a + b\n")
    try:
        for command in (f"{PY} repro_issue.py", f"cd {executor.root} && {PY} repro_issue.py 2>&1 | tail -3"):
            got = model.predict(swt_context(task, command, executor))
            real = executor.run(command)
            assert got.source == "script" and got.output.exit_code == real.exit_code, (command, got, real.output)
            assert got.detail["tests"] == 2 and 0.3 < got.confidence < 1
    finally:
        for name in ("repro_issue.py", "pkg/extra.py"):
            (executor.root / name).unlink(missing_ok=True)


NEW_TESTS = ("diff --git a/tests/test_add.py b/tests/test_add.py\n--- a/tests/test_add.py\n+++ b/tests/test_add.py\n"
             "@@ -10,2 +10,6 @@\n+def test_big():\n+    assert add(10, 20) == 30\n+\n+\n def test_zero():\n"
             "-    assert add(0, 0) == 0\n+    assert add(1, 1) == 2\n"
             "@@ -16,0 +21,3 @@\n+\n+    def test_big_neg(self):\n+        self.assertEqual(add(-10, -20), -30)\n")
"""Adds test_big and TestMore::test_big_neg, rewrites test_zero (its old version passes at the base)."""


@pytest.mark.parametrize("edit", ["none", "gold"])
def test_tests_the_test_patch_adds_do_not_exist_in_the_workspace(local, edit):
    """The test patch is applied at evaluation only: a node id naming a test it adds is pytest's
    "not found" (exit 4), a file run does not collect it, a script running it fails; a FAIL_TO_PASS
    test it rewrites runs in its old version."""
    executor, task, _, model = local
    model.replay = False
    added = ["tests/test_add.py::test_big", "tests/test_add.py::TestMore::test_big_neg"]
    zero = "tests/test_add.py::test_zero"
    task = Task.model_validate({**task.model_dump(), "test_patch": NEW_TESTS,
                                "FAIL_TO_PASS": [*task.FAIL_TO_PASS, *added, zero],
                                "PASS_TO_PASS": [t for t in task.PASS_TO_PASS if t != zero]})
    model.data.add_task(task)  # the row with its test patch
    executor.write_file("repro_issue.py", reproduction_script("pkg/__init__.py", "add", added[:1]))
    if edit == "gold":
        executor.write_file("pkg/__init__.py", FIXED)
    try:
        for command in (f"{PYTEST} -q {added[0]}", f"{PYTEST} -q {added[1]} {zero}", f"{PYTEST} -v {added[1]}",
                        f"{PYTEST} -q {zero}", f"{PYTEST} -q tests", f"{PYTEST} -rA tests/test_add.py"):
            got, real = model.predict(swt_context(task, command, executor)), executor.run(command)
            assert got.source == "tests" and got.output.exit_code == real.exit_code, (command, real.output)
            assert _mask(to_result(got.output).output) == _mask(real.output), command
        got, real = model.predict(swt_context(task, f"{PY} repro_issue.py", executor)), executor.run(f"{PY} repro_issue.py")
        assert (got.source, got.output.exit_code, real.exit_code) == ("script", 1, 1)
        assert got.detail["why"] == {"absent": 1}
    finally:
        (executor.root / "repro_issue.py").unlink(missing_ok=True)


def test_the_registered_model_reads_both_prompt_styles(local, tmp_path):
    executor, task, traces, _ = local
    store = TraceStore(tmp_path / "traces.jsonl")
    for trace in traces:
        store.append(trace)
    steps = [t for t in traces if isinstance(t, StepTrace)]
    for style in styles():
        for step in steps:
            context = step.context.model_copy(update={"task": step.context.task})
            back = context_from_messages(SWT(create_model("openai", {"urls": ["http://x/v1"], "model": "m"}),
                                             SWTConfig(style=style)).messages(context))
            assert (back.command, back.diff, back.files) == (context.command, context.diff, context.files)
        model = create_model("embedded", {"traces": [str(tmp_path / "traces.jsonl")]})
        swt = SWT(model, SWTConfig(style=style))
        result = measure(steps, swt, SWR(model))["splits"]["all"]["swt"]
        assert (result["n"], result["exit_code_accuracy"], result["output_similarity"]) == (len(steps), 1.0, 1.0)
        assert dict(model.counts) == {"replay": len(steps)}
        predicted = swt.predict(task, f"{PYTEST} -q tests 2>&1 | tail -1", executor)
        assert (_mask(predicted.output), predicted.exit_code) == ("2 failed, 3 passed in N s\n", 0)
        assert predicted.confidence == model.last.confidence and 0.9 < predicted.confidence < 1


@pytest.mark.parametrize(("command", "fields"), [
    ("cd /testbed && python -m pytest -q -p no:cacheprovider a/t.py::T::t 2>&1 | tail -15",
     {"runner": "pytest", "targets": ["a/t.py::T::t"], "verbosity": -1, "merged": True, "filters": [["tail", "-15"]]}),
    ("cd sub && pytest -vv -rA ../tests -k 'x and not y' -x --tb=no",
     {"targets": ["tests"], "verbosity": 2, "reportchars": "PpsxXEf", "keyword": "x and not y", "exitfirst": True,
      "tb": "no"}),
    ("python -m unittest -v tests.test_add", {"runner": "unittest", "targets": ["tests.test_add"], "verbosity": 2}),
    ("./tests/runtests.py --verbosity 2 model_fields", {"runner": "django", "targets": ["model_fields"]}),
    ("pytest --weird-option tests", {"exact": False}),
    ("python -W ignore -m pytest -q t.py", {"runner": "pytest", "targets": ["t.py"], "verbosity": -1}),
])
def test_test_commands_are_read(command, fields):
    run = parse_test_command(command, "/testbed")
    assert {k: getattr(run, k) for k in fields} == fields


@pytest.mark.parametrize(("command", "script"), [
    ("python x.py", ("x.py", True)), ("cd /testbed/sub && python3 -u ../r.py 2>&1 | tail -5", ("r.py", True)),
    ("python r.py --verbose", ("r.py", False)), ("python -m pytest x.py", None), ("python -c 'print(1)'", None),
    ("python -W ignore -X dev r.py", ("r.py", True)), ("python manage.py test", None), ("ls x.py", None)])
def test_script_commands_are_read(command, script):
    run = parse_script_command(command)
    assert (run and (run.targets[0], run.exact)) == script


@pytest.mark.parametrize("command", ["python x.py", "pytest tests > log.txt", "pytest tests; echo done", "ls"])
def test_other_commands_are_not_test_commands(command):
    assert parse_test_command(command) is None


def test_keyword_expressions_and_filters():
    test = "tests/test_add.py::TestMore::test_neg"
    assert keyword_matches("neg or zero", test) and keyword_matches("More and not zero", test)
    assert not keyword_matches("not (neg or same)", test) and keyword_matches("", test)
    text = "a\nFAILED x\nb\n2 failed in 0.1s\n"
    assert apply_filters(text, [["tail", "-2"]], 1) == ("b\n2 failed in 0.1s\n", 0, True)
    assert apply_filters(text, [["grep", "-c", "FAILED\\|failed"]], 1) == ("2\n", 0, True)
    assert apply_filters(text, [["grep", "zzz"]], 0) == ("", 1, True)
    assert apply_filters(text, [["awk", "{print}"]], 1) == (text, 1, False)


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """Real traces of demo's more-itertools tasks and one synthesized task of two other repositories."""
    return collect(shipped_tasks(), tmp_path_factory.mktemp("embedded") / "run")


@pytest.mark.bwrap
@pytest.mark.network
def test_real_traces_replay_and_render_like_the_real_runs(shipped):
    steps = [t for t in shipped if isinstance(t, StepTrace) and t.routed == "sim"]
    model = EmbeddedSWT.fit(shipped)
    assert score(model, steps)["by_source"] == {"replay": {"n": len(steps), "exit_code_accuracy": 1.0,
                                                           "outcome_accuracy": 1.0, "output_similarity": 1.0,
                                                           "confidence": 1.0}}
    model.replay = False
    after = [s for s in steps if s.context.diff and (" -v " in s.command or " -rA " in s.command)]
    assert len(after) == 2 * len({s.instance_id for s in steps})
    for step in after:  # after the gold patch every test passes (-v and -rA reports), or its file is missing
        got = model.predict(step.context)
        assert (got.source, got.output.exit_code) == ("tests", step.exit_code)
        if step.exit_code == 4:  # the test patch adds this instance's tests: not in the workspace
            assert step.instance_id == "more-itertools__first-new-test" and "not found" in got.output.stderr
            continue
        assert step.exit_code == 0
        passed = sorted(line for line in step.output.splitlines() if "PASSED" in line)
        assert sorted(line for line in got.output.stdout.splitlines() if "PASSED" in line) == passed
        assert similarity(got.output.stdout, step.output) > 0.9


@pytest.mark.bwrap
@pytest.mark.network
def test_repositories_left_out_of_fitting_are_predicted_from_structure(shipped):
    loro = leave_one_repo_out(shipped)
    repos = {t.repo for t in shipped}
    assert set(loro) == repos | {"overall"} and all(loro[r]["n"] > 0 for r in repos)
    assert loro["overall"]["exit_code_accuracy"] >= 0.8 and loro["overall"]["output_similarity"] > 0.5
    for repo in repos:
        assert 0 < loro[repo]["confidence"] < 1 and "replay" not in loro[repo]["by_source"]
    split = held_out(shipped, test_fraction=0.5)
    print("\nembedded SWT, leave one repository out:", {r: (b["n"], b.get("exit_code_accuracy"),
          b.get("output_similarity"), b.get("ms_per_prediction")) for r, b in loro.items()},
          "\nheld out by split_of:", {k: split[k] for k in ("test_repos", "n", "exit_code_accuracy", "output_similarity")})


@pytest.mark.bwrap
@pytest.mark.network
def test_confidences_are_calibrated_on_exit_codes_left_out_by_repository(shipped):
    """Calibrated confidence = the leave-one-repository-out exit-code accuracy of the prediction's
    path (and band): within [0, 1], exact replays keep 1.0, and routing on it reads correctness."""
    from sweworld.surrogates.swt.calibrate import calibrated, calibration

    table = calibration(shipped)
    assert table and all(0.0 < value < 1.0 for value in table.values())
    assert {key.split(":")[0].split("+")[0] for key in table} <= {"tests", "script", "neighbour", "none"}
    assert calibrated(table, SWTPrediction(SWTOutput(stdout="", stderr="", exit_code=0), 1.0, "replay")) == 1.0
    source = next(iter(k for k in table if ":" not in k and "+" not in k))
    low = SWTPrediction(SWTOutput(stdout="", stderr="", exit_code=0), 0.123, source)
    assert calibrated(table, low) == table.get(f"{source}:0", table[source])
    decided = SWTPrediction(low.output, 0.123, source, {"why": {"predicted": 1}})
    assert calibrated(table, decided) == table.get(f"{source}+predicted:0", table.get(f"{source}+predicted",
                                                                                      calibrated(table, low)))
    swt = EmbeddedSWT.fit(shipped)
    swt.calibration = table
    step = next(s for s in shipped if isinstance(s, StepTrace) and s.routed == "sim")
    got = swt.predict(step.context)
    assert got.output.confidence == got.confidence and (got.source == "replay" or got.confidence in table.values())
