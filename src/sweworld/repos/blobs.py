"""Files of a commit read straight from a git repository's objects, with no checkout.

``GitBlobs(repo)`` (a clone or a bare repository) keeps one ``git cat-file --batch`` process (replace
refs ignored: objects as stored; ``env``: more of git's environment, e.g. ``GIT_INDEX_FILE`` for
``:path`` specs of another index); ``object(spec)`` returns an object's kind and raw bytes; ``read(commit, path)`` returns the
text of ``path`` at ``commit`` (None: no such file, or not a file), decoded as UTF-8 with
replacement as ``tree_source`` reads files. ``source(commit)`` is that reader for one commit (a
``FileSource`` of ``surrogates.swr.patched``). Reading a few files this way costs milliseconds
where a checkout of the whole tree costs seconds and tens of megabytes.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from sweworld.core.errors import RepoError
from sweworld.repos.git import CORE_FLAGS, git_env, try_git


class GitBlobs:
    """One ``cat-file --batch`` reader of a repository (thread-safe; see the module docstring)."""

    def __init__(self, repo: str | Path, *, env: dict[str, str] | None = None):
        found = try_git("rev-parse", "--absolute-git-dir", cwd=repo) if Path(repo).is_dir() else None
        if not found:
            raise RepoError(f"{repo} is not a git repository", hint="pass a clone or a bare mirror (DIR/owner__name)")
        self.git_dir = Path(found)
        self.env = env
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def _process(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(["git", *CORE_FLAGS, "--no-replace-objects", f"--git-dir={self.git_dir}",
                                           "cat-file", "--batch"],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, env=git_env(extra=self.env))
        return self._proc

    def object(self, spec: str) -> tuple[str, bytes] | None:
        """(kind, raw content) of the object ``spec`` names (an id, ``commit:path``); None: missing."""
        if "\n" in spec:
            return None
        with self._lock:
            proc = self._process()
            assert proc.stdin and proc.stdout
            proc.stdin.write(f"{spec}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().decode(errors="replace").split()
            if len(header) != 3:  # "<spec> missing" / "ambiguous"
                return None
            return header[1], proc.stdout.read(int(header[2]) + 1)[:-1]

    @lru_cache(maxsize=2048)  # noqa: B019 - one reader per repository, kept for the run
    def read(self, commit: str, path: str) -> str | None:
        found = self.object(f"{commit}:{path}")
        return found[1].decode("utf-8", errors="replace") if found and found[0] == "blob" else None

    def has(self, commit: str) -> bool:
        """``commit`` is a commit of this repository (read through the open ``cat-file --batch``)."""
        found = self.object(f"{commit}^{{commit}}")
        return found is not None and found[0] == "commit"

    def source(self, commit: str) -> Callable[[str], str | None]:
        return lambda path: self.read(commit, path)

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()  # type: ignore[union-attr]
            self._proc.wait()
        self._proc = None
