"""``sweworld export swerebench`` on a mined instance of the demo's real history (more-itertools 10.5.0
and a real fix with its test): the row is SWE-rebench's (install_config, the frozen ``pip freeze`` of
the built environment, meta), loads back as a SWE-rebench recipe, builds the same environment (the
same freeze) and gives the verdicts of the mined row: gold resolves, the empty patch does not. An
instance whose environment does not build fails alone; the others are written."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sweworld.backends.real import RealBackend, evaluate_instance
from sweworld.cli.app import app
from sweworld.cli.demo.mine import build_history
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder
from sweworld.envs.rebench import KEYS
from sweworld.harness.predictions import Prediction
from sweworld.mine.candidates import screen
from sweworld.mine.export import frozen_requirements
from sweworld.mine.history import first_parent_chain
from sweworld.mine.rules import Limits
from sweworld.tasks import load_tasks, save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

ILEN_TESTS = ["tests/test_ilen_counts.py::test_ilen_counts", "tests/test_ilen_counts.py::test_ilen_of_empty"]


def mined_ilen_fix(root: Path) -> Task:
    """The demo history's ``Fix ilen() counting one too many (#903)`` as ``sweworld mine`` keeps it
    (screened here; its FAIL_TO_PASS are the two tests the regression breaks)."""
    history = build_history(root)
    mirror = history.root / ".git"
    out = screen(first_parent_chain(mirror), mirror=mirror, repo="more-itertools/more-itertools",
                 source=str(history.root), limits=Limits(), tree_of=lambda sha: history.root,
                 available_pythons=["3.11"])
    task = next(c.task for c in out.candidates if c.commit.subject.startswith("Fix ilen()"))
    return task.model_copy(update={"FAIL_TO_PASS": ILEN_TESTS, "PASS_TO_PASS": []})


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Task, dict, Path]:
    root = tmp_path_factory.mktemp("export")
    own = mined_ilen_fix(root / "history")
    broken = own.model_copy(update={"instance_id": "broken-install", "install": "exit 3"})
    save_tasks([broken, own], root / "tasks.jsonl")
    out = root / "rows.jsonl"
    result = CliRunner().invoke(app, ["export", "swerebench", "--dataset", str(root / "tasks.jsonl"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "broken-install" in result.output and "1 rows" in result.output  # the failed one alone
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == [own.instance_id]
    return own, rows[0], out


def test_the_row_is_swerebench_shaped(exported):
    own, row, _out = exported
    config = row["install_config"]
    assert set(config) == set(KEYS) and config["packages"] == "requirements.txt"
    assert config["log_parser"] == "parse_log_pytest" and config["test_cmd"].startswith("pytest")
    assert not {"python", "packages", "pip_packages", "install", "test_cmd"} & set(row)
    frozen = row["requirements"].splitlines()
    assert any(line.startswith("pytest==") for line in frozen) and any(line.startswith("pip==") for line in frozen)
    assert not any("more-itertools" in line.lower() or "/testbed" in line for line in frozen)
    assert row["environment_setup_commit"] == own.environment_setup_commit and row["FAIL_TO_PASS"] == ILEN_TESTS
    assert row["meta"]["has_test_patch"] and row["meta"]["num_modified_files"] == 1
    assert row["docker_image"] == row["image_name"] == "swerebench/sweb.eval.x86_64.more-itertools_1776_more-itertools-903"


def test_loaded_back_it_builds_the_same_environment(exported):
    _own, row, out = exported
    loaded = load_tasks(out).by_id(row["instance_id"])
    backend = RealBackend(EnvBuilder(), env_source="recipe")
    recipe = backend.builder.recipe(loaded)
    assert recipe.source == "swerebench" and recipe.packages_frozen
    assert frozen_requirements(backend, loaded) == row["requirements"]


def _resolved(task: Task, patch: str, root: Path, builder: EnvBuilder) -> bool:
    prediction = Prediction(instance_id=task.instance_id, model_name_or_path="test", model_patch=patch)
    return evaluate_instance(task, prediction, root / uuid.uuid4().hex[:8], builder=builder, timeout=600).resolved


def test_gold_resolves_and_empty_does_not_as_for_the_mined_row(exported, tmp_path):
    own, row, out = exported
    loaded = load_tasks(out).by_id(row["instance_id"])
    builder = EnvBuilder()
    verdicts = {name: (_resolved(task, task.patch, tmp_path, builder), _resolved(task, "", tmp_path, builder))
                for name, task in (("mined", own), ("swerebench", loaded))}
    assert verdicts["swerebench"] == verdicts["mined"] == (True, False), verdicts
