"""Versions of setuptools_scm projects built from trees without history (SWE-bench's pytest, ...)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, make_git_tree

from sweworld.envs.era import era_seeds
from sweworld.envs.recipe import EnvRecipe
from sweworld.envs.scmversion import (
    distribution_name,
    env_var_name,
    from_mirror,
    from_release_line,
    next_dev_version,
    pretend_version_env,
)
from sweworld.envs.scripts import env_stage_script, instance_stage_script

PYPROJECT = """\
[build-system]
requires = ["setuptools>=45", "setuptools_scm[toml]>=6.2"]
build-backend = "setuptools.build_meta"

[project]
name = "my-scm.project"
dynamic = ["version"]

[tool.setuptools_scm]
write_to = "src/_version.py"
"""


def test_guess_next_dev_as_setuptools_scm() -> None:
    assert next_dev_version("v7.2.0", 0, "0123456789abcdef") == "7.2.0"
    assert next_dev_version("5.4.1", 3, "0123456789abcdef") == "5.4.2.dev3+g01234567"
    assert next_dev_version("not-a-version", 3, "0123") is None
    assert from_release_line("5.4") == "5.4.0" and from_release_line("0.12") == "0.12.0"
    assert from_release_line(None) is None and from_release_line("x.y") is None


def test_version_from_the_mirror_tags_else_the_release_line(tmp_path: Path) -> None:
    repo, first = make_git_tree(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "src/m.py": "x = 1\n"})
    git(repo, "tag", "v2.0.1")
    (repo / "src/m.py").write_text("x = 2\n")
    git(repo, "commit", "-qam", "two")
    head = git(repo, "rev-parse", "HEAD")
    assert from_mirror(repo / ".git", first) == "2.0.1"
    assert from_mirror(repo / ".git", head) == f"2.0.2.dev1+g{head[:8]}"

    assert distribution_name(repo) == "my-scm.project"
    var = env_var_name("my-scm.project")
    assert var == "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_SCM_PROJECT"
    assert pretend_version_env(repo, repo / ".git", head, "2.0") == {var: f"2.0.2.dev1+g{head[:8]}"}
    # a shallow mirror (no tags): the task's release line; no scm at all: nothing
    untagged, commit = make_git_tree(tmp_path / "untagged", {"pyproject.toml": PYPROJECT})
    assert pretend_version_env(untagged, untagged / ".git", commit, "2.0") == {var: "2.0.0"}
    plain, commit = make_git_tree(tmp_path / "plain", {"setup.py": "from setuptools import setup\nsetup(name='p')\n"})
    assert pretend_version_env(plain, plain / ".git", commit, "1.0") == {}


def test_scripts_pin_era_tools_and_a_date_cutoff() -> None:
    recipe = EnvRecipe(python="3.9", seed_packages=era_seeds("3.9"), exclude_newer="2024-10-01",
                       packages=["pytest"], install="python -m pip install -e .[test]")
    env = env_stage_script(recipe, python=Path("/usr/bin/python3.9"), uv=Path("/sweworld/bin/uv"))
    assert "pip==24.2 setuptools==75.1.0 wheel==0.44.0" in env and "--exclude-newer 2024-10-01" in env
    inst = instance_stage_script(recipe, uv=Path("/sweworld/bin/uv"),
                                 extra_env={"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_X": "1.0"})
    assert "export SETUPTOOLS_SCM_PRETEND_VERSION_FOR_X=1.0" in inst
    pre, real = [line for line in inst.splitlines() if "install" in line and "-e .[test]" in line]
    assert "--exclude-newer 2024-10-01" in pre and real == "python -m pip install -e .[test]"
    assert era_seeds("3.6")[0] == "pip==21.3.1" and era_seeds("2.7") == []
