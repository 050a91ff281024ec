"""Small superprojects with submodules whose directories are empty, as base trees exported from a
mirror have them (old astropy's ``astropy_helpers``)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, make_git_tree

HELPERS_URL = "https://github.com/astropy/astropy-helpers.git"

#: setup.py of a project that needs astropy_helpers from its submodule at build time, as
#: ah_bootstrap.use_astropy_helpers() puts it on sys.path before setup.py imports from it.
SETUP_PY = """\
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "astropy_helpers"))
import astropy_helpers
print("sweworld-test: astropy_helpers from", os.path.dirname(astropy_helpers.__file__))
from setuptools import setup
setup(name="ahdemo", version="0.1", py_modules=["ahdemo"])
"""


def superproject(root: Path, gitlinks: dict[str, tuple[str, str]], files: dict[str, str]) -> tuple[Path, str]:
    """A repository with ``files`` and, for each ``path: (url, commit)``, a ``.gitmodules`` entry and
    a gitlink with an empty directory; returns (path, commit)."""
    modules = "".join(f'[submodule "{path}"]\n\tpath = {path}\n\turl = {url}\n' for path, (url, _) in gitlinks.items())
    repo, _ = make_git_tree(root, {**files, ".gitmodules": modules})
    for path, (_, commit) in gitlinks.items():
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")
        (repo / path).mkdir(parents=True, exist_ok=True)
    git(repo, "commit", "-qm", "submodules")
    return repo, git(repo, "rev-parse", "HEAD")
