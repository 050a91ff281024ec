"""Recipe resolution (task fields, swebench specs, defaults from a real tree) and the cache keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task
from sweworld.envs.recipe import (
    DEFAULT_INSTALL,
    EnvRecipe,
    env_key,
    instance_key,
    read_extras,
    resolve_recipe,
)


def task(**fields) -> Task:
    return Task(**{"instance_id": "o__r-1", "repo": "owner/repo", "base_commit": "abc123", **fields})


def test_task_fields_win_over_swebench_spec(tmp_path: Path) -> None:
    t = task(repo="psf/requests", version="2.0", python="3.12", install="python -m pip install .",
             pre_install=["sed -i 's/a/b/' setup.cfg", "apt-get install -y libfoo"],
             pip_packages=["six==1.16.0"], packages="attrs cattrs=1.0", test_cmd="pytest -x")
    recipe = resolve_recipe(t, tmp_path)
    assert recipe.source == "task"
    assert (recipe.python, recipe.install, recipe.test_cmd) == ("3.12", "python -m pip install .", "pytest -x")
    assert recipe.packages == ["attrs", "cattrs==1.0"] and recipe.pip_packages == ["six==1.16.0"]
    assert recipe.pre_install == ["sed -i 's/a/b/' setup.cfg"]
    assert not recipe.install_repo_in_env
    assert any("apt-get" in n for n in recipe.notes)


def test_task_missing_parts_come_from_the_default(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\n[project.optional-dependencies]\ntests = ["hypothesis"]\n')
    recipe = resolve_recipe(task(python="3.11.4"), tmp_path)
    assert recipe.source == "task" and recipe.python == "3.11"
    assert recipe.install == DEFAULT_INSTALL and recipe.install_repo_in_env
    assert recipe.install_extras == ["tests"] and recipe.packages == ["pytest"]
    assert recipe.test_cmd == "pytest -rA"


def test_swebench_requests_spec() -> None:
    recipe = resolve_recipe(task(repo="psf/requests", version="2.0"), None)
    assert recipe.source == "swebench" and recipe.python == "3.9"
    assert recipe.packages == ["pytest"] and recipe.install == "python -m pip install ."
    assert recipe.test_cmd == "pytest -rA"
    assert any("conda packages 'pytest'" in n for n in recipe.notes)


def test_swebench_django_spec_reads_requirements_from_the_tree(tmp_path: Path) -> None:
    reqs = tmp_path / "tests" / "requirements"
    reqs.mkdir(parents=True)
    (reqs / "py3.txt").write_text("asgiref ~= 3.2\n# comment\npylibmc; sys.platform != 'win32'\n-e .\n")
    recipe = resolve_recipe(task(repo="django/django", version="3.0"), tmp_path)
    assert recipe.source == "swebench" and recipe.python == "3.6"
    assert recipe.packages == ["asgiref ~= 3.2", "pylibmc; sys.platform != 'win32'"]
    assert recipe.install == "python -m pip install -e ."
    assert recipe.test_cmd.startswith("./tests/runtests.py")
    assert recipe.env_vars == {"LANG": "en_US.UTF-8", "LANGUAGE": "en_US:en", "LC_ALL": "en_US.UTF-8"}
    assert recipe.eval_commands == []
    notes = "\n".join(recipe.notes)
    assert "locale-gen" in notes and "tests/requirements/py3.txt" in notes and "-e ." in notes
    assert "locale -a" in notes


def test_swebench_django_without_tree_keeps_the_file_and_missing_file_fails(tmp_path: Path) -> None:
    recipe = resolve_recipe(task(repo="django/django", version="3.0"), None)
    assert recipe.requirements_files == ["tests/requirements/py3.txt"] and recipe.packages == []
    with pytest.raises(EnvBuildError, match="no requirements file"):
        resolve_recipe(task(repo="django/django", version="3.0"), tmp_path)


def test_swebench_xarray_environment_yml(tmp_path: Path) -> None:
    (tmp_path / "ci" / "requirements").mkdir(parents=True)
    (tmp_path / "ci" / "requirements" / "environment.yml").write_text(
        "name: xarray-tests\nchannels: [conda-forge]\ndependencies:\n  - numpy\n  - netcdf4\n  - hdf5\n"
        "  - pip\n  - pip:\n    - numbagg\n")
    recipe = resolve_recipe(task(repo="pydata/xarray", version="2022.06"), tmp_path)
    assert recipe.packages == ["numbagg"] and recipe.optional_packages == ["numpy", "netcdf4"]
    assert "numpy==1.23.0" in recipe.pip_packages
    with pytest.raises(EnvBuildError, match="read from the tree"):
        resolve_recipe(task(repo="pydata/xarray", version="2022.06"), None)


def test_swegym_environment_yml_is_found_where_swegym_looks(tmp_path: Path) -> None:
    """SWE-Gym's specs say ``packages: environment.yml``; its harness looks in its own map
    (modin: environment-dev.yml, dask: continuous_integration/environment-3.X.yaml first)."""
    (tmp_path / "environment-dev.yml").write_text(
        "name: modin\nchannels: [conda-forge]\ndependencies:\n  - pip\n  - pandas>=2.2,<2.4\n  - pytables>=3.8.0\n"
        "  - pip:\n    - connectorx>=0.2.6a4\n")
    recipe = resolve_recipe(task(repo="modin-project/modin", version="0.25"), tmp_path)
    assert recipe.source == "swegym" and recipe.python == "3.9"
    assert recipe.packages == ["connectorx>=0.2.6a4"] and "pandas>=2.2,<2.4" in recipe.optional_packages
    (tmp_path / "environment-dev.yml").unlink()
    with pytest.raises(EnvBuildError, match=r"environment-dev\.yml"):
        resolve_recipe(task(repo="modin-project/modin", version="0.25"), tmp_path)
    ci = tmp_path / "continuous_integration"
    ci.mkdir()
    (ci / "environment-3.9.yaml").write_text("name: test\ndependencies:\n  - toolz\n")
    (ci / "environment-3.10.yaml").write_text("name: test\ndependencies:\n  - cloudpickle\n")
    (tmp_path / "environment.yml").write_text("name: test\ndependencies:\n  - numpy\n")
    recipe = resolve_recipe(task(repo="dask/dask", version="2024.1"), tmp_path)
    assert recipe.optional_packages == ["cloudpickle"]


def test_default_reads_extras_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\nrequires-python = ">=3.8,<3.12"\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\nDev = ["ruff"]\ndocs = ["sphinx"]\n')
    recipe = resolve_recipe(task(), tmp_path)
    assert recipe.source == "default"
    assert recipe.install_extras == ["test", "Dev"]
    assert recipe.python == "3.11"  # newest here that '<3.12' allows
    assert recipe.install_repo_in_env and recipe.install == DEFAULT_INSTALL and recipe.packages == ["pytest"]


def test_default_reads_extras_from_setup_cfg_and_setup_py(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = x\n[options]\npython_requires = >=3.7, <3.10\n"
        "[options.extras_require]\ntesting =\n    pytest\nspeedups = cython\n")
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(extras_require={'tests': ['mock'], 'docs': []})\n")
    extras, requires = read_extras(tmp_path)
    assert extras == {"testing", "speedups", "tests"} and requires == ">=3.7, <3.10"
    recipe = resolve_recipe(task(), tmp_path)
    assert recipe.install_extras == ["tests", "testing"] and recipe.python == "3.9"


def test_default_without_tree_or_metadata(tmp_path: Path) -> None:
    assert resolve_recipe(task(), None).python == "3.11"
    recipe = resolve_recipe(task(), tmp_path)
    assert recipe.python == "3.11" and recipe.install_extras == []
    assert any("requires-python" in n for n in recipe.notes)


def test_env_key_is_stable_and_ignores_instance_fields() -> None:
    base = EnvRecipe(python="3.11", packages=["six"], install="pip install -e .", pre_install=["echo a"])
    key = env_key(base, "o/r", "abc")
    assert len(key) == 16 and int(key, 16) >= 0
    assert env_key(EnvRecipe.model_validate(base.model_dump()), "o/r", "abc") == key
    other_instance = base.model_copy(update={"install": "python setup.py develop", "pre_install": [],
                                             "test_cmd": "tox", "notes": ["x"]})
    assert env_key(other_instance, "o/r", "abc") == key
    assert env_key(base.model_copy(update={"python": "3.12"}), "o/r", "abc") != key
    assert env_key(base.model_copy(update={"pip_packages": ["attrs"]}), "o/r", "abc") != key
    assert env_key(base, "o/r2", "abc") != key and env_key(base, "o/r", "abd") != key
    inst = instance_key(key, "c1", base)
    assert inst == instance_key(key, "c1", base) != instance_key(key, "c2", base)
    assert instance_key(key, "c1", other_instance) != inst


def test_python_field_is_normalised() -> None:
    assert EnvRecipe(python="python3.9").python == "3.9"
    with pytest.raises(ValueError):
        EnvRecipe(python="latest")

def test_swegym_env_patches_run_on_a_copy_of_the_yml(tmp_path: Path) -> None:
    """dask's spec deletes the pip section (dask/distributed from GitHub) with ``sed`` before the
    environment is created; the tree's file stays as it was."""
    ci = tmp_path / "continuous_integration"
    ci.mkdir()
    text = "name: test\ndependencies:\n  - toolz\n  - pip\n  - pip:\n    - git+https://github.com/dask/distributed\n"
    (ci / "environment-3.10.yaml").write_text(text)
    recipe = resolve_recipe(task(repo="dask/dask", version="2024.1"), tmp_path)
    assert recipe.packages == [] and recipe.optional_packages == ["toolz"]
    assert any(n.startswith("env_patches `sed -i") for n in recipe.notes)
    assert (ci / "environment-3.10.yaml").read_text() == text
