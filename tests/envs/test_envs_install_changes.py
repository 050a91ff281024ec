"""An install that rewrites tracked files (a setuptools_scm version file, an sdist's own egg-info)
changes the installed state, not the agent's work: those files are left out of every episode's diff
(they once made every tabulate episode's patch carry ``tabulate/version.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import make_git_tree

from sweworld.backends.real import RealBackend
from sweworld.core.types import Task

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

SETUP_PY = """\
from pathlib import Path
from setuptools import setup
Path("vpkg/version.py").write_text("version = '1.0.post1'\\n")  # what setuptools_scm does at build time
setup(name="vpkg", version="1.0", packages=["vpkg"])
"""


def test_files_the_install_rewrites_stay_out_of_the_diff(tmp_path: Path) -> None:
    repo, commit = make_git_tree(tmp_path / "repo", {"setup.py": SETUP_PY, "vpkg/__init__.py": "x = 1\n",
                                                     "vpkg/version.py": "version = 'unknown'\n"})
    task = Task(instance_id="sweworld-test__vpkg-1", repo="sweworld-test/vpkg", base_commit=commit,
                repo_source=str(repo), python="3.11", install="python -m pip install --no-build-isolation -e .",
                test_cmd="python -c 'import vpkg'")
    with RealBackend().open(task) as sb:
        assert sb.read_file("vpkg/version.py") == "version = '1.0.post1'\n"  # the install did rewrite it
        assert sb.run("git status --porcelain").output == ""
        assert sb.diff() == ""
        sb.write_file("vpkg/__init__.py", "x = 2\n")
        diff = sb.diff()
    assert "vpkg/__init__.py" in diff and "version.py" not in diff
