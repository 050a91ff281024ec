"""``sweworld export images`` on the demo history's mined ilen fix: a real OCI layout written without a
daemon, whose image runs under ``--env-source image`` with the verdicts of the recipe (gold resolves,
the empty patch does not), ``/testbed`` a clean git repository at the base commit; a second image of
the same environment shares every layer but its own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from test_mine_export import mined_ilen_fix
from typer.testing import CliRunner

from sweworld.backends.real import RealBackend
from sweworld.cli.app import app
from sweworld.core.types import Task
from sweworld.harness.predictions import Prediction
from sweworld.tasks import load_tasks, save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Task, Path, Path]:
    root = tmp_path_factory.mktemp("images")
    own = mined_ilen_fix(root / "history")
    twin = own.model_copy(update={"instance_id": own.instance_id + "-twin"})
    save_tasks([own, twin], root / "tasks.jsonl")
    layout, out = root / "layout", root / "rows.jsonl"
    result = CliRunner().invoke(app, ["export", "images", "--dataset", str(root / "tasks.jsonl"), "--layout",
                                      str(layout), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return own, layout, out


def _manifests(layout: Path) -> list[dict]:
    index = json.loads((layout / "index.json").read_text())
    return [json.loads((layout / "blobs" / "sha256" / m["digest"].split(":")[1]).read_text())
            for m in index["manifests"]]


def test_images_share_every_layer_but_the_instance(exported):
    _own, layout, _out = exported
    first, second = ([layer["digest"] for layer in m["layers"]] for m in _manifests(layout))
    assert len(first) == len(second) == 6 and first[:-1] == second[:-1]


def _resolved(backend: RealBackend, task: Task, patch: str, root: Path) -> bool:
    prediction = Prediction(instance_id=task.instance_id, model_name_or_path="test", model_patch=patch)
    return backend.evaluate(task, prediction, root / uuid.uuid4().hex[:8]).resolved


def test_the_image_runs_with_the_verdicts_of_the_recipe(exported, tmp_path):
    own, _layout, out = exported
    row = load_tasks(out).by_id(own.instance_id)
    image = RealBackend(env_source="image")
    with image.open(row) as episode:
        status = episode.run("git status --porcelain && git rev-parse HEAD && python -c 'import more_itertools'")
    assert status.exit_code == 0 and status.output.strip() == own.base_commit, status.output
    recipe = RealBackend(env_source="recipe")
    verdicts = {name: (_resolved(backend, task, task.patch, tmp_path), _resolved(backend, task, "", tmp_path))
                for name, backend, task in (("recipe", recipe, own), ("image", image, row))}
    assert verdicts["image"] == verdicts["recipe"] == (True, False), verdicts
