"""SWE-rebench rows: ``install_config`` (+ the frozen ``requirements`` / ``environment``) -> EnvRecipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task
from sweworld.envs.recipe import env_key, pinned_by_version, resolve_recipe
from sweworld.envs.scripts import env_stage_script

TEST_CMD = "pytest --no-header -rA --tb=line --color=no -p no:cacheprovider -W ignore::DeprecationWarning"
FROZEN = "iniconfig==2.1.0\npackaging==24.2\npluggy==1.5.0\npytest==8.3.5\n-e git+https://x/y@abc#egg=spectree\n"
EXPORT = """name: spectree
channels:
  - defaults
  - conda-forge
dependencies:
  - _libgcc_mutex=0.1=main
  - ca-certificates=2025.2.25=h06a4308_0
  - libffi=3.4.4=h6a678d5_1
  - openssl=3.3.1=h2a9a68b_0
  - pip=24.2=py39h6a678d5_0
  - python=3.9.21=h3c1b88f_2
  - numpy=1.26.4=py39h5f9d8c6_0
  - setuptools=75.6.0=py39h6a678d5_0
  - pip:
    - pytest==8.3.5
    - numpy==1.26.4
    - spectree==1.2.0
"""


def row(config: dict, **fields) -> Task:
    base = {"env_vars": None, "env_yml_path": None, "install": "pip install -e .", "log_parser": "parse_log_pytest",
            "no_use_env": None, "packages": "requirements.txt", "pip_packages": ["pytest"], "pre_install": None,
            "python": "3.9", "reqs_path": ["requirements.txt"], "test_cmd": TEST_CMD}
    return Task(instance_id="0b01001001__spectree-64", repo="0b01001001/spectree", base_commit="a" * 40,
                version="0.3", install_config={**base, **config}, **fields)


def test_requirements_txt_uses_the_frozen_requirements_not_reqs_path():
    recipe = resolve_recipe(row({}, requirements=FROZEN), None)  # no tree: reqs_path is never read
    assert recipe.source == "swerebench" and recipe.python == "3.9"
    assert recipe.packages == ["iniconfig==2.1.0", "packaging==24.2", "pluggy==1.5.0", "pytest==8.3.5"]
    assert recipe.requirements_files == [] and recipe.pip_packages == ["pytest"]
    assert recipe.packages_frozen and "--no-deps -r" in env_stage_script(recipe, python=Path("/usr/bin/python3"))
    assert recipe.install == "LANG=C.UTF-8 LC_ALL=C.UTF-8 pip install -e ."
    assert recipe.test_cmd == TEST_CMD and recipe.env_vars == {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    assert any("frozen 'requirements'" in n for n in recipe.notes)
    assert any("egg=spectree" in n and "dropped" in n for n in recipe.notes)
    assert pinned_by_version(recipe)


def test_without_frozen_requirements_reqs_path_is_read_from_the_tree(tmp_path: Path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text("attrs==23.1.0\n")
    (tmp_path / "requirements" / "dev.txt").write_text("-r base.txt\n-e .\npytest>=7  # tests\n")
    recipe = resolve_recipe(row({"reqs_path": ["requirements/dev.txt"]}), tmp_path)
    assert recipe.packages == ["attrs==23.1.0", "pytest>=7"] and not recipe.packages_frozen
    assert "packages_frozen" not in recipe.env_stage_fields()
    with pytest.raises(EnvBuildError, match="reqs_path") as info:
        resolve_recipe(row({"reqs_path": ["nothing.txt"]}), tmp_path)
    assert "0b01001001__spectree-64" in str(info.value)


def test_environment_export_becomes_pip_requirements():
    recipe = resolve_recipe(row({"packages": "environment.yml", "env_yml_path": ["environment.yml"]},
                                environment=EXPORT), None)
    # conda's numpy and the pip section's numpy are one requirement; the project itself is installed by `install`
    assert recipe.packages == ["setuptools==75.6.0", "pytest==8.3.5", "numpy==1.26.4"]
    skipped = next(n for n in recipe.notes if n.startswith("conda runtime packages skipped"))
    assert all(name in skipped for name in ("_libgcc_mutex", "openssl", "libffi", "python", "pip"))


def test_env_yml_path_is_read_from_the_tree_as_pip(tmp_path: Path):
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "env.yml").write_text(
        "name: x\ndependencies:\n  - python=3.10\n  - dask-core>=2023.1\n  - pip:\n    - pytest-cov\n")
    recipe = resolve_recipe(row({"packages": "environment.yml", "env_yml_path": ["ci/env.yml"],
                                 "no_use_env": True}), tmp_path)
    assert recipe.packages == ["dask>=2023.1", "pytest-cov"]
    assert any("no_use_env" in n for n in recipe.notes)


@pytest.mark.parametrize("fields", [
    {"config": {"packages": "environment.yml"}, "environment": EXPORT.replace("  - numpy=", "  - gdal=3.6.2=h1\n  - numpy=")},
    {"config": {"packages": "numpy gdal=3.6"}},
])
def test_a_conda_only_package_is_one_clear_error_naming_it(fields):
    task = row(fields["config"], **({"environment": fields["environment"]} if "environment" in fields else {}))
    with pytest.raises(EnvBuildError) as info:
        resolve_recipe(task, None)
    text = str(info.value)
    assert "'gdal'" in text and "no pip equivalent" in text and "instance 0b01001001__spectree-64" in text


def test_conda_package_list_and_install_config_details():
    config = {"packages": "numpy=1.26 requests", "python": "2.7", "pre_install": ["apt-get install -y gcc", "make gen"],
              "env_vars": {"TZ": "UTC"}, "install": None, "test_cmd": None, "docker_specs": {}}
    recipe = resolve_recipe(row(config), None)
    assert recipe.packages == ["numpy==1.26", "requests"] and recipe.python == "3.6"  # the fork's floor
    assert recipe.pre_install == ["make gen"] and recipe.install is None and recipe.test_cmd == "pytest -rA"
    assert recipe.env_vars["TZ"] == "UTC"
    assert any("docker_specs" in n for n in recipe.notes)


def test_own_fields_win_and_a_json_encoded_config_is_read():
    own = row({}, requirements=FROZEN).model_copy(update={"python": "3.11", "test_cmd": "pytest -q"})
    assert resolve_recipe(own, None).source == "task"
    encoded = Task.model_validate({"instance_id": "x__y-1", "repo": "x/y", "base_commit": "a" * 40, "requirements": FROZEN,
                                   "install_config": json.dumps(row({}).model_extra["install_config"])})
    assert resolve_recipe(encoded, None).source == "swerebench"


def test_rows_with_the_same_frozen_recipe_share_one_environment():
    one, two = row({}, requirements=FROZEN), row({}, requirements=FROZEN)
    two = two.model_copy(update={"base_commit": "b" * 40, "instance_id": "0b01001001__spectree-65"})
    keys = {env_key(resolve_recipe(t, None), t.repo, t.version) for t in (one, two)}
    other = row({}, requirements=FROZEN.replace("8.3.5", "8.3.4"))
    assert len(keys) == 1 and env_key(resolve_recipe(other, None), other.repo, other.version) not in keys


def test_pip_packages_entries_are_shell_words_as_the_forks_unquoted_join_makes_them():
    """A published row's ``pip_packages`` entry ``'pytest pytest-cov'`` is two packages there (the fork
    joins the list unquoted into one ``pip install``): quoted as one argument, uv could not parse it."""
    recipe = resolve_recipe(row({"pip_packages": ["pytest pytest-cov", "'mock>=2'", "hypothesis"]},
                                requirements=FROZEN), None)
    assert recipe.pip_packages == ["pytest", "pytest-cov", "mock>=2", "hypothesis"]
    assert any("split into words" in n for n in recipe.notes)
    script = env_stage_script(recipe, python=Path("/usr/bin/python3"))
    assert "'pytest pytest-cov'" not in script and "pytest-cov" in script


def test_the_venv_is_seeded_with_the_packaging_tools_of_the_rows_environment():
    """The row's ``environment`` (its image's ``conda env export``) records pip 24.2 and setuptools
    75.6.0: the venv gets those, not today's, whatever ``packages`` says."""
    recipe = resolve_recipe(row({}, requirements=FROZEN, environment=EXPORT), None)
    assert recipe.seed_packages == ["pip==24.2", "setuptools==75.6.0"]
    assert "seed_packages" in recipe.env_stage_fields()
    script = env_stage_script(recipe, python=Path("/usr/bin/python3"))
    assert "pip==24.2" in script and "setuptools==75.6.0" in script
    assert resolve_recipe(row({}, requirements=FROZEN), None).seed_packages == []  # no environment: as before
