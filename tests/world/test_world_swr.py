"""SWR through a real local OpenAI-compatible server with scripted replies, in both prompt styles:
the predicted report is graded by the harness's own grading code, as a real test log is."""

from __future__ import annotations

import json
import sys

import pytest
from world_tasks import NEW_TEST, calc_task, swr_reply, world_model

from chatserver import ChatServer
from sweworld.harness.grade import TestRun, grade
from sweworld.harness.report import InstanceReport
from sweworld.world.swr import SWR, SimInstanceReport, SWRConfig

MARK = {"sweworld": "## Test files (after the test patch)", "swe-world": "### 4. Content of Code to be Executed"}
WRONG_FIX = "def add(a, b):\n    return abs(a - b) if a == b else a + b + 1\n"


def real_log(executor, task, source: str) -> tuple[str, int]:
    """The output and exit code of the task's tests really run on ``source`` + the test patch."""
    executor.write_file("pkg/__init__.py", source)
    executor.write_file("tests/test_add.py", NEW_TEST)
    result = executor.run(f"{sys.executable} -m pytest -rA -p no:cacheprovider tests/test_add.py")
    executor.run(f"git checkout -q {task.base_commit} -- .")
    return result.output, result.exit_code


@pytest.mark.parametrize("style", ["sweworld", "swe-world"])
@pytest.mark.parametrize("source", [None, WRONG_FIX], ids=["gold", "wrong"])
def test_predicted_report_is_graded_like_a_real_run(tmp_path, style, source):
    executor, task = calc_task(tmp_path)
    log, exit_code = real_log(executor, task, source or "def add(a, b):\n    return a + b\n")
    expected = grade(task, TestRun(test_output=log, exit_code=exit_code, markers_found=True, test_patch_applied=True))
    assert expected.resolved == (source is None)  # the real run tells gold from wrong
    with ChatServer([swr_reply(log, int(expected.resolved))]) as server:
        report = SWR(world_model(server.url, temperature=0.7), SWRConfig(style=style)).evaluate(task, task.patch, executor)
    assert isinstance(report, SimInstanceReport) and isinstance(report, InstanceReport)
    assert (report.tests_status, report.resolution, report.resolved) == (
        expected.tests_status, expected.resolution, expected.resolved)
    assert (report.test_exit_code, report.crashed) == (exit_code, False)
    assert (report.patch_exists, report.patch_successfully_applied, report.error) == (True, True, None)
    assert (report.sim_probability, report.sim_graded_from, report.sim_samples, report.sim_test_report) == (
        float(expected.resolved), ["report"], 1, log)
    (request,) = server.requests
    user = request["messages"][1]["content"]
    assert MARK[style] in user and NEW_TEST in user and "pytest -rA tests/test_add.py" in user
    assert task.patch in user and "tests/test_add.py::test_add" in user and request["temperature"] == 0.7
    assert "tests_status" in json.loads(report.to_json())[task.instance_id]
    assert json.loads(report.extras_json())["sim_probability"] == float(expected.resolved)


def test_empty_patch_is_unresolved_without_a_call(tmp_path):
    executor, task = calc_task(tmp_path)
    with ChatServer() as server:
        swr = SWR(world_model(server.url))
        reports = [swr.evaluate(task, patch, executor) for patch in ("", "  \n", None)]
    assert server.requests == [] and executor.commands == []
    assert [(r.resolved, r.patch_exists, r.sim_probability) for r in reports] == [(False, False, 0.0)] * 3
    assert reports[2].patch_is_None


def test_a_patch_that_does_not_apply_is_unresolved_without_a_call(tmp_path):
    executor, task = calc_task(tmp_path)
    with ChatServer() as server:
        report = SWR(world_model(server.url)).evaluate(task, task.patch.replace("a - b", "a * b"), executor)
    assert server.requests == []
    assert (report.resolved, report.patch_exists, report.patch_successfully_applied) == (False, True, False)


def test_k_samples_give_a_probability(tmp_path):
    executor, task = calc_task(tmp_path)
    passed = "PASSED tests/test_add.py::test_zero\nPASSED tests/test_add.py::test_add\n"
    failed = "PASSED tests/test_add.py::test_zero\nFAILED tests/test_add.py::test_add - assert 4 == 3\n"
    with ChatServer([swr_reply(passed, 1), "no json", swr_reply(failed, 0), swr_reply(passed, 1)]) as server:
        report = SWR(world_model(server.url), SWRConfig(k=3)).evaluate(task, task.patch, executor)
    assert len(server.requests) == 4  # three samples, one of them asked again
    assert (report.sim_rewards, report.sim_stated_rewards) == ([1, 1, 0], [1, 1, 0])  # sample 2 retried
    assert report.sim_probability == pytest.approx(2 / 3) and report.resolved and report.sim_test_report == passed
    assert report.tests_status["FAIL_TO_PASS"]["success"] == ["tests/test_add.py::test_add"]
    assert (report.sim_samples, report.sim_invalid, report.sim_attempts) == (3, 0, 2)


def test_the_graded_report_wins_over_the_stated_reward(tmp_path):
    executor, task = calc_task(tmp_path)
    failed = "PASSED tests/test_add.py::test_zero\nFAILED tests/test_add.py::test_add - assert 4 == 3\n"
    with ChatServer([swr_reply(failed, 1)]) as server:
        report = SWR(world_model(server.url)).evaluate(task, task.patch, executor)
    assert (report.resolved, report.sim_rewards, report.sim_stated_rewards, report.test_exit_code) == (
        False, [0], [1], 1)
    assert report.tests_status["FAIL_TO_PASS"]["failure"] == ["tests/test_add.py::test_add"]


@pytest.mark.parametrize(("trust", "resolved", "source"), [(True, True, "reward"), (False, False, "report")])
def test_a_prose_report_is_graded_from_the_reward_when_trusted(tmp_path, trust, resolved, source):
    executor, task = calc_task(tmp_path)
    with ChatServer([swr_reply("All FAIL_TO_PASS and PASS_TO_PASS tests pass.", 1)]) as server:
        report = SWR(world_model(server.url), SWRConfig(trust_reward_when_unparsed=trust)).evaluate(
            task, task.patch, executor)
    assert (report.resolved, report.sim_graded_from) == (resolved, [source])
    expected = task.FAIL_TO_PASS if resolved else []
    assert report.tests_status["FAIL_TO_PASS"]["success"] == expected


@pytest.mark.parametrize("style", ["sweworld", "swe-world"])
def test_no_valid_reply_is_an_infra_error_of_the_simulator(tmp_path, style):
    executor, task = calc_task(tmp_path)
    bad = ['{"test_report": "x"}', '{"test_report": "x", "reward": 7}', "<think>no answer</think>"]
    with ChatServer(bad) as server:
        report = SWR(world_model(server.url), SWRConfig(style=style)).evaluate(task, task.patch, executor)
    assert len(server.requests) == 3
    assert (report.resolved, report.error_kind, report.sim_invalid, report.sim_attempts) == (False, "infra", 1, 3)
    assert "no valid reply" in report.error and "no JSON" in report.error
