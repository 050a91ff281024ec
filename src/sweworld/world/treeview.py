"""A finished base tree read in place, for a simulated evaluation, which runs no command.

An SWR evaluation asks two things of the repository: what ``testfiles.inspect_patch`` answers (does
the agent's patch ``git apply`` to the base commit, the test files after the test patch) and the
base text of the files the patch touches. ``TreeView(tree)`` answers both from the base tree
(``RepoStore.base_tree``) without an episode, so no sandbox starts (about 90 ms of an evaluation)
and nothing is written to the tree, which other episodes share:

- ``inspect_patch``: git with the tree as its repository and work tree, on a scratch index (a copy
  of the tree's own, which holds exactly the base commit: the tree is never checked out again) and a
  scratch object directory (``GIT_OBJECT_DIRECTORY``, the tree's objects as its alternates), both in
  a temporary directory removed afterwards; then the same ``git apply --cached --check`` (and, where
  git refuses a safe patch, the harness's ``patch --fuzz`` with ``--dry-run``, over the tree's files),
  ``git apply --cached`` of the test patch and reads of the index as the episode's script runs (the
  files through one ``repos.blobs.GitBlobs`` reader of the scratch index). Git writes what the test patch makes into the
  scratch objects; one it finds already among the tree's it does not write but "freshens" (its
  time stamp set to now, where the tree is writable): the only mark an evaluation leaves;
  What the test patch gives (whether it applies, the test files after it) is the same for every
  patch of an instance: it is asked once per tree and test patch;
- ``read_file``: the tree's file; a path (or a link) that leads out of the tree reads as missing,
  as it would find nothing of the host in an episode.

The build artefacts an episode of a built environment lays over the tree (``__pycache__``,
``*.egg-info``) are not seen: no git question and no source file the SWR reads is among them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from sweworld.core.types import Task
from sweworld.harness.patches import FUZZY, patch_paths, unsafe_paths, with_newline
from sweworld.repos.blobs import GitBlobs
from sweworld.repos.git import try_git
from sweworld.world.testfiles import RAW_FACTOR, PatchView, read_plain


@lru_cache(maxsize=64)
def _after_test_patch(root: Path, stamp: tuple[int, int], test_patch: str, paths: tuple[str, ...],
                      cap: int) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """``TreeView.after_test_patch``, once per tree (its index's time and size: a tree made again is
    asked again), test patch and paths."""
    del stamp
    return TreeView(root).after_test_patch(test_patch, paths, cap)


class TreeView:
    """A base tree read in place (see the module docstring); ``with TreeView(tree) as view:``."""

    def __init__(self, tree: str | Path):
        self.root = Path(tree).resolve()
        self.git_dir = self.root / ".git"

    def __enter__(self) -> TreeView:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read_file(self, path: str) -> str:
        """The tree's file ``path`` (relative), invalid UTF-8 replaced; ``FileNotFoundError`` when it
        is absent or leads out of the tree."""
        file = (self.root / path).resolve()
        if not file.is_relative_to(self.root) or not file.is_file():
            raise FileNotFoundError(path)
        return file.read_text(encoding="utf-8", errors="replace")

    def _applies(self, patch: str, env: dict[str, str], *check: str) -> bool:
        """``git apply --cached [--check]`` of ``patch`` to the scratch index succeeded."""
        return try_git(f"--git-dir={self.git_dir}", f"--work-tree={self.root}", "apply", "--cached", *check, "-",
                       cwd=self.root, env=env, input=with_newline(patch).encode("utf-8", "surrogateescape")) is not None

    def _fuzzy(self, patch: str, scratch: str) -> bool:
        """The harness's last command, ``patch --batch --fuzz=5 -p1``, would apply ``patch`` to the tree
        (``--dry-run``: nothing written, its temporary files in ``scratch``); a path that leads out of
        the tree, as the harness refuses it, does not."""
        if unsafe_paths(patch) or any(not (self.root / path).resolve().is_relative_to(self.root)
                                      for path in patch_paths(patch)):
            return False
        try:
            done = subprocess.run([*FUZZY, "--dry-run", "--directory", str(self.root)],
                                  input=with_newline(patch).encode("utf-8", "surrogateescape"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "TMPDIR": scratch},
                                  check=False)
        except OSError:  # no patch program: git's answer stands
            return False
        return done.returncode == 0

    def inspect_patch(self, task: Task, patch: str | None, paths: list[str], *, limit: int) -> PatchView:
        """``testfiles.inspect_patch``'s answer, from the tree (see the module docstring)."""
        index = self.git_dir / "index"
        if not index.is_file():
            return PatchView(git=False, files=read_plain(self, paths))
        applied = None
        if patch is not None and patch.strip():
            with self._scratch(index) as env:
                applied = (self._applies(patch, env, "--check")
                           or self._fuzzy(patch, os.path.dirname(env["GIT_INDEX_FILE"])))
        stamp = index.stat()
        test_patch_applied, files = _after_test_patch(self.root, (stamp.st_mtime_ns, stamp.st_size), task.test_patch,
                                                      tuple(paths), RAW_FACTOR * limit)
        return PatchView(git=True, applied=applied, test_patch_applied=test_patch_applied, files=list(files))

    @contextmanager
    def _scratch(self, index: Path) -> Iterator[dict[str, str]]:
        """git's environment for a scratch index (a copy of the tree's) and object directory."""
        with tempfile.TemporaryDirectory(prefix="sweworld-inspect-") as scratch:
            shutil.copyfile(index, os.path.join(scratch, "index"))
            os.mkdir(os.path.join(scratch, "objects"))
            yield {"GIT_INDEX_FILE": os.path.join(scratch, "index"), "GIT_OBJECT_DIRECTORY": os.path.join(scratch, "objects"),
                   "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.git_dir / "objects")}

    def after_test_patch(self, test_patch: str, paths: tuple[str, ...], cap: int) -> tuple[bool, tuple[tuple[str, str], ...]]:
        """(the test patch applies to the base, the files of ``paths`` after it): what every
        patch of the instance gets, whatever the agent's patch is."""
        with self._scratch(self.git_dir / "index") as env:
            applied = not test_patch.strip() or self._applies(test_patch, env)
            return applied, tuple(self._indexed(list(paths), env, cap) if paths else [])

    def _indexed(self, paths: list[str], env: dict[str, str], cap: int) -> list[tuple[str, str]]:
        """(path, its first ``cap`` bytes as text) of each of ``paths`` that the scratch index holds."""
        blobs = GitBlobs(self.git_dir, env=env)
        try:
            found = [(path, blobs.object(":" + path)) for path in paths]
        finally:
            blobs.close()
        return [(path, got[1][:cap].decode("utf-8", "replace")) for path, got in found if got and got[0] == "blob"]
