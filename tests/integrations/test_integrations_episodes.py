"""The task a framework names and the backend its config asks for (``integrations.episodes``)."""

from __future__ import annotations

import pytest

from sweworld.errors import ConfigError, DatasetError
from sweworld.integrations.episodes import EpisodeSpec, backend_config, instance_of_image, spec_of, task_of


@pytest.mark.parametrize(("image", "instance"), [
    ("swebench/sweb.eval.x86_64.django_1776_django-11099:latest", "django__django-11099"),
    ("docker.io/swebench/sweb.eval.x86_64.psf_1776_requests-2317:v1", "psf__requests-2317"),
    ("sweb.eval.x86_64.sphinx-doc__sphinx-8435", "sphinx-doc__sphinx-8435"),
    ("ghcr.io/epoch-research/swe-bench.eval.x86_64.astropy__astropy-12907", "astropy__astropy-12907"),
    ("sweb.eval.arm64.boltons-24.0.0_1776_change_arith_op_1776_a5f686dc", "boltons-24.0.0__change_arith_op__a5f686dc"),
    ("python:3.11-slim", None), ("ubuntu", None),
])
def test_swebench_image_names_map_to_their_instance(image, instance):
    assert instance_of_image(image) == instance


def test_an_image_that_names_no_instance_is_one_clear_error():
    with pytest.raises(DatasetError, match="names no SWE-bench instance") as info:
        task_of(EpisodeSpec(image="python:3.11"), where="compose.yaml")
    assert "compose.yaml" in str(info.value)


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
    assert config.kind == "sim" and config.world.kind is None and config.world.dataset == "lite"
    with pytest.raises(ConfigError, match=r"world\.urlz"):
        backend_config(EpisodeSpec(backend="hybrid", backend_options={"world": {"urlz": []}}))
    with pytest.raises(ConfigError, match="instance"):
        spec_of({"instance": "x"}, where="sandbox config")
