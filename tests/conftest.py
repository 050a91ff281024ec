"""Shared fixtures: a persistent test cache, small real git trees, bubblewrap availability."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from pathlib import Path

import pytest

from sweworld.testing import keyring
from sweworld.testing.isolation import SECRET_VARIABLE

TEST_HOME = Path(os.environ.get("SWEWORLD_TEST_HOME") or Path("~/.cache/sweworld-test").expanduser())


@pytest.fixture(scope="session", autouse=True)
def sweworld_home() -> Path:
    """Every test shares one cache (sdists, mirrors, environments) that survives between runs.

    A secret is planted in the environment of the test process, and so of every process it starts
    (servers, CLI runs), before any episode opens: the isolation probes (``check_isolation``) look
    for it in every process an episode can see. The test process also gets a session keyring of its
    own, shared by every thread it starts later (``testing.keyring.join``), where the keyring probe
    plants its key as a cluster's login would."""
    keyring.join()
    TEST_HOME.mkdir(parents=True, exist_ok=True)
    os.environ["SWEWORLD_HOME"] = str(TEST_HOME)
    os.environ.setdefault(SECRET_VARIABLE, f"sk-planted-{uuid.uuid4().hex}")
    return TEST_HOME


def _dev_null_is_a_device() -> bool:
    try:
        return stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    except OSError:
        return False


@pytest.fixture(autouse=True)
def dev_null_stays_a_device():
    """Fails the test after which ``/dev/null`` is no longer the null device (once replaced by a
    symlink during a run, which broke every later git call) and restores it when root can."""
    yield
    if not _dev_null_is_a_device():
        if os.geteuid() == 0:
            if os.path.lexists("/dev/null"):
                os.unlink("/dev/null")
            os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.chmod("/dev/null", 0o666)
        pytest.fail("this test replaced /dev/null (restored)")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_git_tree(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A real git repository with one commit holding ``files``; returns (path, commit)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root, git(root, "rev-parse", "HEAD")


@pytest.fixture
def small_tree(tmp_path: Path) -> tuple[Path, str]:
    return make_git_tree(tmp_path / "repo", {
        "pkg/__init__.py": "def add(a, b):\n    return a + b\n",
        "tests/test_add.py": "from pkg import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "README": "small tree\n",
    })


def pytest_collection_modifyitems(config, items):
    if shutil.which("bwrap") or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason="bubblewrap is not installed (apt-get install bubblewrap)")
    for item in items:
        if "bwrap" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def sandbox(small_tree):
    """A real isolated episode over ``small_tree``."""
    from sweworld.sandbox import Layers, Sandbox
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        yield sb
