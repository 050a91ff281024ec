"""inspect_evals' own ``swe_bench`` task with ``sandbox_type="sweworld"``: its dataset loader, its
solver, its compose file naming the SWE-bench image, and its scorer unchanged (the eval script that
begins ``source /opt/miniconda3/bin/activate && conda activate testbed``, reinstalls the package and
runs the spec's test command), on a SWE-bench-shaped ``psf/requests`` instance built from PyPI."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_evals.swe_bench")

from inspect_ai import eval as inspect_eval
from inspect_evals.swe_bench import swe_bench

from inspect_replay import call, gold_edits, mock_model
from swebench_shaped import IMAGE, INSTANCE_ID, requests_task, swebench_rows_file
from sweworld.integrations.episodes import instance_of_image

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    task = requests_task()
    directory = tmp_path_factory.mktemp("swebench-rows")
    swebench_rows_file(directory, task)
    return task, directory


def score_of(rows, monkeypatch, tmp_path, *outputs):
    _, directory = rows
    monkeypatch.setenv("SWEWORLD_DATASET", str(directory / "test.jsonl"))  # the rows sweworld reads the instance from
    evaluation = swe_bench(dataset=str(directory), split="test", sandbox_type="sweworld", revision="main")
    [sample] = evaluation.dataset
    assert sample.metadata["image_name"] == IMAGE and instance_of_image(IMAGE) == INSTANCE_ID
    [log] = inspect_eval(evaluation, model=mock_model(*outputs), display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    return log.samples[0].scores["swe_bench_scorer"]


def test_the_gold_replayed_resolves_under_inspect_evals_scorer(rows, monkeypatch, tmp_path):
    task, _ = rows
    score = score_of(rows, monkeypatch, tmp_path, *gold_edits(task.patch), call("submit", answer="done"))
    assert score.value == 1.0, score.explanation
    assert "pos += slice_length\n" in score.metadata["model_patch"]


def test_nothing_replayed_is_unresolved_under_inspect_evals_scorer(rows, monkeypatch, tmp_path):
    score = score_of(rows, monkeypatch, tmp_path, call("submit", answer="nothing"))
    assert score.value == 0.0
    assert "test_slices_cover_the_string" in score.explanation  # graded: the FAIL_TO_PASS tests ran and failed


def test_the_episode_reaches_its_local_stand_ins_as_a_container_reaches_the_network(rows, monkeypatch):
    """psf/requests' tests call httpbin.org: an episode runs the local stand-in for its whole life, so
    a test script that is not the harness's (the scorer's eval script, an agent's pytest) reaches it."""
    import asyncio

    from sweworld.integrations.inspect_sandbox import SweworldSandboxEnvironment
    _, directory = rows

    async def fetch():
        envs = await SweworldSandboxEnvironment.sample_init("x", None, {"instance_id": INSTANCE_ID,
                                                                       "dataset": str(directory / "test.jsonl")})
        try:
            return await envs["default"].exec(["python", "-c", "import requests; r = requests.get("
                                               "'http://httpbin.org/get', timeout=30); print(r.status_code)"])
        finally:
            await SweworldSandboxEnvironment.sample_cleanup("x", None, envs, False)

    result = asyncio.run(fetch())
    assert result.stdout.strip() == "200", result
