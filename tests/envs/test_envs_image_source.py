"""Which tasks run on their container image (``envs.image.image_name``) and how their tests run there
(``envs.recipes.image``): rows of each family, as published."""

from __future__ import annotations

import json

from sweworld.core.types import Task
from sweworld.envs.image import image_name
from sweworld.envs.recipes.image import image_recipe

BASE = {"base_commit": "a" * 40, "problem_statement": "x"}


def _task(**fields) -> Task:
    return Task.model_validate({**BASE, **fields})


def test_a_swebench_row_builds_from_its_spec_unless_images_are_asked_for():
    task = _task(instance_id="psf__requests-2317", repo="psf/requests", version="2.4")
    assert image_name(task) is None
    assert image_name(task, "recipe") is None
    assert image_name(task, "image") == "swebench/sweb.eval.x86_64.psf_1776_requests-2317:latest"


def test_a_multilingual_row_runs_on_swebenchs_image_and_its_spec():
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS as spec_versions
    version = next(iter(spec_versions["caddyserver/caddy"]))
    task = _task(instance_id="caddyserver__caddy-6411", repo="caddyserver/caddy", version=version)
    assert image_name(task) == "swebench/sweb.eval.x86_64.caddyserver_1776_caddy-6411:latest"
    recipe = image_recipe(task)
    spec = spec_versions["caddyserver/caddy"][version]
    assert recipe.directives is False and recipe.source == "image" and recipe.install is None
    assert recipe.test_cmd.splitlines() == [*spec.get("build", []), *spec["test_cmd"]]


def test_a_row_that_names_only_an_image_runs_on_it():
    r2e = _task(instance_id="r2e-pandas-1", repo="pandas-dev/pandas", docker_image="namanjain12/pandas_final:abc")
    smith = _task(instance_id="oauthlib__oauthlib.1fd52536.combine_file__09vlzwgc", repo="swesmith/oauthlib__oauthlib.1fd52536",
                  image_name="jyangballin/swesmith.x86_64.oauthlib_1776_oauthlib.1fd52536")
    assert image_name(r2e) == "namanjain12/pandas_final:abc"
    assert image_name(smith) == "jyangballin/swesmith.x86_64.oauthlib_1776_oauthlib.1fd52536"
    assert image_name(smith, "recipe") is None


def test_a_rebench_row_in_python_builds_and_in_go_runs_its_image():
    config = {"test_cmd": "pytest -rA", "log_parser": "parse_log_pytest", "install": "pip install -e ."}
    py = _task(instance_id="o__p-1", repo="o/p", image_name="swerebench/sweb.eval.x86_64.o_1776_p-1",
               install_config=config)
    go = _task(instance_id="o__g-1", repo="o/g", language="go", image_name="swerebench/sweb.eval.x86_64.o_1776_g-1",
               install_config=json.dumps({"test_cmd": ["go build ./...", "go test -v ./..."],
                                          "log_parser": "parse_log_gotest"}))
    assert image_name(py) is None
    assert image_name(py, "image") == "swerebench/sweb.eval.x86_64.o_1776_p-1"
    assert image_name(go) == "swerebench/sweb.eval.x86_64.o_1776_g-1"
    recipe = image_recipe(go)
    assert recipe.test_cmd == "go build ./...\ngo test -v ./..." and recipe.directives is False
    one = image_recipe(py)
    assert one.test_cmd == "pytest -rA" and one.directives is True


def test_swebench_python_steps_activate_conda_then_reinstall_as_its_eval_script_does():
    task = _task(instance_id="django__django-11099", repo="django/django", version="3.0")
    recipe = image_recipe(task, conda=True)
    assert recipe.eval_commands[:2] == ["source /opt/miniconda3/bin/activate", "conda activate testbed"]
    assert recipe.eval_commands[-1] == "python -m pip install -e ."
    assert recipe.test_cmd.startswith("./tests/runtests.py") and recipe.directives and recipe.install is None
    assert "conda activate testbed" not in image_recipe(task, conda=False).eval_commands
