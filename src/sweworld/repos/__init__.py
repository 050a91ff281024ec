"""Repositories: a task's source -> a cached mirror -> a base tree at a commit.

- ``RepoSource.parse(text)``: ``pypi:NAME==VERSION``, a git URL, or a local git directory.
- ``RepoStore(root=None, repos_dir=None)``: ``.base_tree(task)``, ``.tree(repo, commit, source)``,
  ``.mirror(repo, source)``, ``.resolve(repo, rev, source)``.
- ``pypi_repo(name, version) -> (mirror, commit)``: a release's sdist as a deterministic git commit.
- ``commit_tree_changes(mirror, parent, files, message) -> commit``: a deterministic commit on top.
"""

from sweworld.repos.commit import commit_tree_changes
from sweworld.repos.pypi import download_sdist, pypi_repo
from sweworld.repos.source import RepoSource, default_source, find_in_repos_dir
from sweworld.repos.store import RepoStore

__all__ = [
    "RepoSource",
    "RepoStore",
    "commit_tree_changes",
    "default_source",
    "download_sdist",
    "find_in_repos_dir",
    "pypi_repo",
]
