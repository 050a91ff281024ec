"""SWE-rebench-format rows of real instances load, build and grade with the verdicts of their own route.

Two instances of the default dataset (real PyPI packages with validated gold patches) are written as
a SWE-rebench row would carry them: no sweworld environment fields, an ``install_config`` (python,
``packages: requirements.txt``, install, pip_packages, SWE-rebench's pytest command, ``log_parser``)
and the frozen ``requirements``; ``docker_image`` / ``image_name`` as SWE-rebench names them. Gold
resolves and the empty patch does not, exactly as through the rows' own fields; ``sweworld eval``
reads the file as it is.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sweworld.datasets
from sweworld.cli.app import app
from sweworld.core.types import Task
from sweworld.envs import EnvBuilder
from sweworld.envs.rebench import to_row
from sweworld.harness.predictions import Prediction
from sweworld.integrations.episodes import task_of_image
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow]

REPOS = ("pypi/cachetools", "pypi/inflection")
TEST_CMD = "pytest --no-header -rA --tb=line --color=no -p no:cacheprovider -W ignore::DeprecationWarning"
FROZEN = ["coverage==7.6.1", "iniconfig==2.0.0", "packaging==24.1", "pluggy==1.5.0", "pytest==8.3.3"]


def rebench_row(task: Task) -> dict:
    """``task`` as SWE-rebench publishes a row: its recipe in install_config, its pip freeze beside it."""
    return to_row(task, {"python": task.python, "packages": "requirements.txt", "reqs_path": ["requirements.txt"],
                         "install": "pip install -e .", "pip_packages": ["pytest"], "test_cmd": TEST_CMD,
                         "log_parser": "parse_log_pytest"}, requirements="\n".join(FROZEN) + "\n")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory) -> list[tuple[Task, Task]]:
    tasks = load_tasks(sweworld.datasets.path_of("default"))
    chosen = [next(t for t in tasks if t.repo == repo) for repo in REPOS]
    path = tmp_path_factory.mktemp("rebench") / "rows.jsonl"
    path.write_text("".join(json.dumps(rebench_row(t)) + "\n" for t in chosen))
    rows = load_tasks(path)
    return [(own, rows.by_id(own.instance_id)) for own in chosen]


def _resolved(task: Task, patch: str, root: Path, builder: EnvBuilder) -> bool:
    from sweworld.backends.real import evaluate_instance

    prediction = Prediction(instance_id=task.instance_id, model_name_or_path="test", model_patch=patch)
    return evaluate_instance(task, prediction, root / uuid.uuid4().hex[:8], builder=builder, timeout=600).resolved


def test_rows_load_as_swerebench_recipes(pairs):
    builder = EnvBuilder()
    for own, row in pairs:
        assert row.python is None and row.packages is None and row.test_cmd is None
        recipe = builder.recipe(row)
        assert recipe.source == "swerebench" and recipe.packages == FROZEN and recipe.test_cmd == TEST_CMD
        assert builder.recipe(own).source == "task"
        assert task_of_image(row.model_extra["docker_image"] + ":latest", [r for _, r in pairs]) is row


def test_gold_resolves_and_empty_does_not_as_through_their_own_route(pairs, tmp_path):
    builder = EnvBuilder()
    for own, row in pairs:
        verdicts = {route: (_resolved(task, task.patch, tmp_path, builder), _resolved(task, "", tmp_path, builder))
                    for route, task in (("own", own), ("swerebench", row))}
        assert verdicts["swerebench"] == verdicts["own"] == (True, False), (own.instance_id, verdicts)


def test_sweworld_eval_runs_the_rows_file_as_published(pairs, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(rebench_row(own)) + "\n" for own, _ in pairs))
    result = CliRunner().invoke(app, ["eval", "--dataset", str(rows), "--predictions", "gold", "--run-id", "rebench",
                                      "--logs-dir", str(tmp_path / "logs"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    summary = json.loads(next(tmp_path.glob("*.rebench.json")).read_text())
    assert summary["resolved_instances"] == len(pairs)
