"""Real instance builds of projects whose ``setup.py`` needs the ``astropy_helpers`` submodule, which
base trees lack (old astropy): filled from a mirror in the repos dir, else from the PyPI sdist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import make_git_tree
from tests.envs.gitlinks import HELPERS_URL, SETUP_PY, superproject

from sweworld.core.types import Task
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.repos import RepoStore

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

INSTALL = "python -m pip install --no-build-isolation -e ."
FILES = {"setup.py": SETUP_PY, "ahdemo.py": "x = 1\n"}


def _task(name: str, repo: Path, commit: str) -> Task:
    return Task(instance_id=f"sweworld-test__{name}-1", repo=f"sweworld-test/{name}", base_commit=commit,
                repo_source=str(repo), python="3.11", install=INSTALL, test_cmd="python -c 'import ahdemo'")


def _notes(layer) -> list[str]:
    return json.loads((layer.path / "meta.json").read_text())["notes"]


def test_astropy_helpers_is_filled_from_the_pypi_sdist(tmp_path: Path) -> None:
    repo, commit = superproject(tmp_path / "sp", {"astropy_helpers": (HELPERS_URL, "1" * 40)}, FILES)
    layer = EnvBuilder().instance(_task("ah-pypi", repo, commit))
    [note] = _notes(layer)
    assert "filled from the PyPI sdist of astropy-helpers==" in note and "as a stand-in" in note
    assert (layer.testbed / "astropy_helpers" / "astropy_helpers" / "__init__.py").is_file()
    assert not (layer.testbed / "astropy_helpers" / ".git").exists()
    with episode_sandbox(layer) as sb:
        assert sb.run("python -c 'import ahdemo'").exit_code == 0
        assert sb.run("git submodule status").output.strip() == f"-{'1' * 40} astropy_helpers"
        assert sb.diff() == "" and sb.run("git status --porcelain").output.strip() == ""


def test_a_submodule_mirror_in_the_repos_dir_is_checked_out_at_the_gitlink(tmp_path: Path) -> None:
    _, sub = make_git_tree(tmp_path / "repos" / "astropy__astropy-helpers",
                           {"astropy_helpers/__init__.py": "MIRROR = True\n"})
    links = {"astropy_helpers": (HELPERS_URL, sub), "extern/lib": ("../lib.git", "2" * 40)}
    repo, commit = superproject(tmp_path / "sp", links, FILES)
    layer = EnvBuilder(RepoStore(repos_dir=tmp_path / "repos")).instance(_task("ah-mirror", repo, commit))
    mirrored, missing = _notes(layer)
    assert "checked out from the mirror of astropy/astropy-helpers" in mirrored
    assert "submodule extern/lib (../lib.git)" in missing and "--repos-dir DIR/sweworld-test__lib" in missing
    log = json.loads((layer.path / "meta.json").read_text())["log"]
    assert "sweworld: submodule extern/lib (../lib.git)" in Path(log).read_text()
    with episode_sandbox(layer) as sb:
        assert sb.run("cat astropy_helpers/astropy_helpers/__init__.py").output.strip() == "MIRROR = True"
        status = sb.run("git submodule status astropy_helpers").output
        assert status.startswith(f" {sub} astropy_helpers"), status  # up to date: a build fetches nothing
        assert sb.diff() == ""
