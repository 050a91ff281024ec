"""``RepoStore``: a task's repository -> cached mirror -> base tree at a commit, cached per (repo, commit).

Layout under the cache root (default ``$SWEWORLD_HOME/repos``)::

    mirrors/<name>-<hash>.git         bare mirrors of git URLs and local clones
    mirrors/pypi__NAME__VERSION.git   one-commit repositories built from PyPI sdists
    sdists/NAME-VERSION/<archive>     downloaded sdists
    trees/<owner__name>/<sha>/        base trees (see ``tree.py``), sharing unchanged files (``share.py``)
    locks/                            file locks

A finished tree is found without touching the mirror or the network, so a warm cache works offline.
"""

from __future__ import annotations

from pathlib import Path

from sweworld.core.errors import RepoError
from sweworld.core.types import Task
from sweworld.repos.cache import area, locked, publish, repos_root, staging
from sweworld.repos.derive import ensure_derived
from sweworld.repos.git import SHA_RE
from sweworld.repos.mirror import ensure_mirror, resolve_in_mirror
from sweworld.repos.pypi import pypi_repo
from sweworld.repos.source import RepoSource, missing_error, safe_name, source_for
from sweworld.repos.tree import build_tree, is_complete
from sweworld.usage import mark_used


class RepoStore:
    """Resolves repositories and materialises base trees.

    ``root``: the repos cache directory (default ``$SWEWORLD_HOME/repos``). ``repos_dir``: a directory
    of existing clones (``DIR/owner__name`` or ``DIR/owner/name``) used before the network.
    ``timeout``: seconds allowed for one clone or fetch of a remote URL (``None``: no limit).
    """

    def __init__(self, root: Path | str | None = None, repos_dir: Path | str | None = None,
                 *, timeout: float | None = None):
        self._root = Path(root).expanduser() if root is not None else None
        self.repos_dir = Path(repos_dir).expanduser().resolve() if repos_dir is not None else None
        self.timeout = timeout

    @property
    def root(self) -> Path:
        """The cache directory (created on first use; ``$SWEWORLD_HOME`` is read then)."""
        return repos_root(self._root)

    def source(self, repo: str, source: str | RepoSource | None = None) -> RepoSource:
        """The parsed ``source``, or the default for ``repo`` (``repos_dir``, then GitHub)."""
        return source_for(repo, source, self.repos_dir)

    def mirror(self, repo: str, source: str | RepoSource | None = None, *,
               instance_id: str | None = None, commit: str | None = None) -> Path:
        """The cached mirror of ``repo`` (a bare repository), created on first use."""
        src = self._source(repo, source, instance_id, commit)
        try:
            if src.kind == "pypi":
                return pypi_repo(src.name or "", src.version or "", root=self.root)[0]
            return ensure_mirror(self.root, src, timeout=self.timeout)
        except RepoError as exc:
            raise missing_error("repository not found or cannot be cloned", repo=repo, commit=commit,
                                instance_id=instance_id, source=src, detail=exc.message) from exc

    def resolve(self, repo: str, rev: str, source: str | RepoSource | None = None, *,
                instance_id: str | None = None) -> str:
        """The full sha of ``rev`` (sha, abbreviated sha, tag or branch) in the mirror of ``repo``."""
        src = self._source(repo, source, instance_id, rev)
        mirror = self.mirror(repo, src, instance_id=instance_id, commit=rev)
        sha = resolve_in_mirror(self.root, src, mirror, rev, timeout=self.timeout)
        if sha is None:
            raise missing_error("commit not found", repo=repo, commit=rev, instance_id=instance_id, source=src,
                                detail=f"  mirror: {mirror}")
        return sha

    def tree_path(self, repo: str, sha: str) -> Path:
        """Where the base tree of ``repo`` at full ``sha`` lives (built or not)."""
        return area(self.root, "trees") / safe_name(repo) / sha

    def tree(self, repo: str, commit: str, source: str | RepoSource | None = None, *,
             instance_id: str | None = None) -> Path:
        """A clean working tree of ``repo`` at ``commit`` with a self-contained one-commit ``.git``
        (its use is recorded for ``sweworld env gc``)."""
        return mark_used(self._tree(repo, commit, source, instance_id=instance_id))

    def _tree(self, repo: str, commit: str, source: str | RepoSource | None, *, instance_id: str | None) -> Path:
        wanted = commit.strip().lower()
        if SHA_RE.match(wanted) and is_complete(self.tree_path(repo, wanted)):
            return self.tree_path(repo, wanted)
        src = self._source(repo, source, instance_id, commit)
        sha = self.resolve(repo, commit, src, instance_id=instance_id)
        final = self.tree_path(repo, sha)
        if is_complete(final):
            return final
        mirror = self.mirror(repo, src, instance_id=instance_id, commit=sha)
        with locked(self.root, f"tree-{safe_name(repo)}-{sha}"):
            if is_complete(final):
                return final
            with staging(final) as tmp:
                build_tree(mirror, sha, tmp, what=f"instance {instance_id}" if instance_id else repo,
                           raw_attributes=src.kind == "pypi", share_with=sorted(tmp.parent.iterdir()))
                publish(tmp, final)
        return final

    def base_tree(self, task: Task) -> Path:
        """The tree of ``task.repo`` at ``task.base_commit`` (source: ``task.repo_source`` or default).

        A synthesized instance whose base commit is missing from the mirror is rebuilt from its
        release (``environment_setup_commit``) and its fix (see ``derive.py``).
        """
        if not self.tree_path(task.repo, task.base_commit).exists() and task.environment_setup_commit:
            mirror = self.mirror(task.repo, task.repo_source, instance_id=task.instance_id,
                                 commit=task.base_commit)
            ensure_derived(mirror, instance_id=task.instance_id, base_commit=task.base_commit,
                           parent=task.environment_setup_commit, fix_patch=task.patch)
        return self.tree(task.repo, task.base_commit, task.repo_source, instance_id=task.instance_id)

    def env_tree(self, task: Task) -> Path:
        """The tree at ``task.environment_setup_commit`` (falls back to the base commit)."""
        return self.tree(task.repo, task.env_commit, task.repo_source, instance_id=task.instance_id)

    def _source(self, repo: str, source: str | RepoSource | None, instance_id: str | None,
                commit: str | None) -> RepoSource:
        try:
            return self.source(repo, source)
        except RepoError as exc:
            raise missing_error("bad repository source", repo=repo, commit=commit, instance_id=instance_id,
                                detail=exc.message) from exc
