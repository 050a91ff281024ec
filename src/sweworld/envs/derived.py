"""Install layers derived from a sibling commit's layer, without a build.

A synthesized instance's base commit differs from its release (``environment_setup_commit``) only
in a few Python source files that the install does not read. Its install layer is then the
release's, hard-linked (no copy, no sandbox, no install): the byte code of the changed files is
removed (it would be stale) and the git index is rebuilt for the base commit, keeping the release
layer's assume-unchanged flags. Anything else (new, deleted or non-Python files, packaging files,
``pre_install`` steps, a file the install rewrote, a layer that commits its set-up state) falls back
to a real build.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path, PurePosixPath

from sweworld.core.errors import RepoError
from sweworld.core.paths import remove_tree
from sweworld.core.types import Task
from sweworld.repos.git import git

PACKAGING = frozenset({"setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in", "conftest.py"})


def changed_sources(mirror: Path, parent: str, commit: str) -> list[str] | None:
    """Files modified between ``parent`` and ``commit``; None unless all are modified Python sources."""
    try:
        out = git(f"--git-dir={mirror}", "diff", "--name-status", "-z", "--no-renames", parent, commit,
                  what=str(mirror))
    except RepoError:
        return None
    fields = [f for f in out.split("\0") if f]
    pairs = list(zip(fields[::2], fields[1::2], strict=False))
    if not pairs or any(status != "M" or not path.endswith(".py") or PurePosixPath(path).name in PACKAGING
                        for status, path in pairs):
        return None
    return [path for _, path in pairs]


def _assume_unchanged(index: Path, git_dir: Path) -> list[str]:
    listing = git(f"--git-dir={git_dir}", "ls-files", "-v", "-z", env={"GIT_INDEX_FILE": str(index)},
                  what=str(git_dir))
    return [entry[2:] for entry in listing.split("\0") if entry[:2] == "h "]


def derive_layer(builder, task: Task, env, tree: Path, key: str, final: Path) -> bool:
    """Publish ``final`` as a derived layer of ``task``; False when it cannot be derived (build it)."""
    parent_commit = task.environment_setup_commit
    if not parent_commit or parent_commit == task.base_commit or env.recipe.pre_install or env.recipe.commits_setup():
        return False  # a committed set-up state is a commit on the parent's base, not on this one's
    mirror = builder.repos.mirror(task.repo, task.repo_source, instance_id=task.instance_id)
    changed = changed_sources(mirror, parent_commit, task.base_commit)
    if changed is None:
        return False
    parent = builder.instance(task.model_copy(update={
        "instance_id": f"{task.instance_id}@env", "base_commit": parent_commit, "patch": "", "test_patch": ""}),
        env)
    if any((parent.testbed / path).exists() for path in changed):  # the install rewrote a changed file
        return False
    started = time.monotonic()
    staging = final.parent / f".{key}.deriving"
    remove_tree(staging)
    staging.mkdir(parents=True)
    try:
        for name in ("testbed", "venv"):
            subprocess.run(["cp", "-al", str(parent.path / name), str(staging / name)], check=True,
                           capture_output=True)
        for path in changed:
            cache = (staging / "testbed" / path).parent / "__pycache__"
            for pyc in cache.glob(f"{PurePosixPath(path).stem}.*.pyc"):
                pyc.unlink()
        index = staging / "testbed" / ".git" / "index"
        flags = _assume_unchanged(parent.testbed / ".git" / "index", tree / ".git") if index.exists() else []
        index.unlink(missing_ok=True)
        index.parent.mkdir(parents=True, exist_ok=True)
        env_vars = {"GIT_INDEX_FILE": str(index)}
        git(f"--git-dir={tree / '.git'}", "read-tree", task.base_commit, env=env_vars, what=str(tree))
        if flags:
            git(f"--git-dir={tree / '.git'}", f"--work-tree={tree}", "update-index", "--assume-unchanged", "--",
                *flags, env=env_vars, cwd=tree, what=str(tree))
        meta = {"key": key, "base_commit": task.base_commit, "env": env.key, "derived_from": parent.key,
                "changed": changed, "complete": True, "seconds": round(time.monotonic() - started, 3),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (staging / "meta.json").write_text(json.dumps(meta, indent=2))
        remove_tree(final)
        os.replace(staging, final)
    except (OSError, subprocess.CalledProcessError, RepoError):
        remove_tree(staging)
        return False
    return True
