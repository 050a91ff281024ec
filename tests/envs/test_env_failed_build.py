"""A failed environment build is remembered for a while: the candidates of one release line share one
environment, and a mining run asked it again for each of them (ljharb/qs: five minutes a time, each
ending in the same git error). A real build that fails (an install step that exits 3), asked twice."""

from __future__ import annotations

import subprocess

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task

pytestmark = [pytest.mark.bwrap]


def test_a_failed_environment_is_answered_from_memory(tmp_path, monkeypatch):
    from sweworld.envs import EnvBuilder, build
    from sweworld.repos import RepoStore

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "README").write_text("x\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True)
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    task = Task(instance_id="local__fails-1", repo="local/fails", base_commit=commit, version="1", repo_source=str(tree),
                language="javascript", install_config={"install": "echo 'npm error code E404' >&2; exit 3",
                                                       "test_cmd": "node --test", "log_parser": "parse_log_tap"})
    builder = EnvBuilder(RepoStore(root=tmp_path / "repos"))
    builds = []
    real = builder._build_env
    monkeypatch.setattr(builder, "_build_env", lambda *a, **k: (builds.append(1), real(*a, **k)))
    with pytest.raises(EnvBuildError) as first:
        builder.environment(task)
    with pytest.raises(EnvBuildError) as second:
        builder.environment(task)
    assert second.value is first.value and len(builds) == 1
    assert "npm error code E404" in first.value.message.splitlines()[0]
    monkeypatch.setattr(build, "FAILED_FOR", 0.0)  # once the memory is stale, it is built again
    with pytest.raises(EnvBuildError):
        builder.environment(task)
    assert len(builds) == 2
