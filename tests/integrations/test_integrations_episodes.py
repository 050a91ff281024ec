"""The task a framework names and the backend its config asks for (``integrations.episodes``)."""

from __future__ import annotations

import json

import pytest

from sweworld.core.errors import ConfigError, DatasetError
from sweworld.core.types import Task
from sweworld.integrations.episodes import (
    EpisodeSpec,
    backend_config,
    instance_of_image,
    spec_of,
    task_of,
    task_of_image,
)
from sweworld.tasks import save_tasks


@pytest.mark.parametrize(("image", "instance"), [
    ("swebench/sweb.eval.x86_64.django_1776_django-11099:latest", "django__django-11099"),
    ("docker.io/swebench/sweb.eval.x86_64.psf_1776_requests-2317:v1", "psf__requests-2317"),
    ("sweb.eval.x86_64.sphinx-doc__sphinx-8435", "sphinx-doc__sphinx-8435"),
    ("ghcr.io/epoch-research/swe-bench.eval.x86_64.astropy__astropy-12907", "astropy__astropy-12907"),
    ("sweb.eval.arm64.boltons-24.0.0_1776_change_arith_op_1776_a5f686dc", "boltons-24.0.0__change_arith_op__a5f686dc"),
    ("swerebench/sweb.eval.x86_64.0b01001001_1776_spectree-64", "0b01001001__spectree-64"),  # SWE-rebench's
    ("swerebench/sweb.eval.x86_64.tox-dev_1776_tox-3846:latest", "tox-dev__tox-3846"),
    ("swerebench/sweb.eval.x86_64.tox-dev_1776_tox-3846@sha256:" + "0" * 64, "tox-dev__tox-3846"),
    ("python:3.11-slim", None), ("ubuntu", None),
])
def test_swebench_image_names_map_to_their_instance(image, instance):
    assert instance_of_image(image) == instance


def test_an_image_that_names_no_instance_and_no_row_is_a_task_of_its_own():
    """A Harbor task whose Dockerfile starts FROM an image of its own: the image is the environment."""
    task = task_of(EpisodeSpec(image="registry.example:5000/team/python:3.11", dataset="lite"), where="compose.yaml")
    assert (task.instance_id, task.base_commit, task.model_extra["docker_image"]) == (
        "python", "HEAD", "registry.example:5000/team/python:3.11")


def test_an_image_a_row_names_is_that_rows_task(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"instance_id": "own__task-1", "repo": "own/task", "base_commit": "a" * 40,
                                "problem_statement": "x", "docker_image": "registry.example/own/task:7"}) + "\n")
    assert task_of(EpisodeSpec(image="registry.example/own/task:7", dataset=str(rows)), where="x").instance_id == \
        "own__task-1"


def test_an_unknown_instance_names_the_dataset():
    with pytest.raises(DatasetError, match="not-there") as info:
        task_of(EpisodeSpec(instance_id="not-there", dataset="lite"), where="x")
    assert "lite" in str(info.value)


def test_the_task_comes_from_the_spec_or_the_environment(monkeypatch):
    monkeypatch.setenv("SWEWORLD_DATASET", "lite")
    monkeypatch.setenv("SWEWORLD_BACKEND", "sim")
    spec = EpisodeSpec(image="sweb.eval.x86_64.boltons-24.0.0_1776_change_arith_op_1776_a5f686dc")
    assert spec.dataset == "lite" and spec.backend == "sim"
    assert task_of(spec, where="x").repo == "pypi/boltons"


def test_sim_without_world_options_is_the_embedded_world_and_wrong_options_are_one_config_error():
    config = backend_config(EpisodeSpec(backend="sim", dataset="lite"))
    assert config.kind == "sim" and config.world.kind == "embedded" and config.world.dataset == "lite"
    with pytest.raises(ConfigError, match=r"world\.urlz"):
        backend_config(EpisodeSpec(backend="hybrid", backend_options={"world": {"urlz": []}}))
    with pytest.raises(ConfigError, match="instance"):
        spec_of({"instance": "x"}, where="sandbox config")


def _rebench_rows() -> list[Task]:
    common = {"base_commit": "a" * 40, "install_config": {"python": "3.11", "log_parser": "parse_log_pytest"}}
    return [Task(instance_id="Project-MONAI__MONAI-5003", repo="Project-MONAI/MONAI",
                 docker_image="swerebench/sweb.eval.x86_64.project-monai_1776_monai-5003",
                 image_name="swerebench/sweb.eval.x86_64.project-monai_1776_monai-5003", **common),
            Task(instance_id="owner__pkg-7", repo="owner/pkg", image_name="registry.example/custom-image:v2", **common)]


def test_swerebench_image_names_map_back_to_their_row():
    rows = _rebench_rows()
    # SWE-rebench lowercases the id in its image names: the row is found by its docker_image / image_name
    assert task_of_image("swerebench/sweb.eval.x86_64.project-monai_1776_monai-5003:latest", rows) is rows[0]
    assert task_of_image("docker.io/swerebench/sweb.eval.x86_64.project-monai_1776_monai-5003", rows) is rows[0]
    assert task_of_image("registry.example/custom-image", rows) is rows[1]  # any image a row names
    assert task_of_image("swerebench/sweb.eval.x86_64.owner_1776_pkg-7", rows) is rows[1]  # by id, any case
    assert task_of_image("swerebench/sweb.eval.x86_64.owner_1776_pkg-8", rows) is None


def test_an_episode_named_by_a_swerebench_image_opens_its_row(tmp_path):
    dataset = tmp_path / "rebench.jsonl"
    save_tasks(_rebench_rows(), dataset)
    spec = EpisodeSpec(image="swerebench/sweb.eval.x86_64.project-monai_1776_monai-5003:latest", dataset=str(dataset))
    assert task_of(spec, where="x").instance_id == "Project-MONAI__MONAI-5003"
    with pytest.raises(DatasetError, match="project-monai__monai-9"):
        task_of(EpisodeSpec(image="swerebench/sweb.eval.x86_64.project-monai_1776_monai-9", dataset=str(dataset)),
                where="x")
