"""Deterministic commits: fixed identity, fixed date, hermetic git, plumbing only.

A commit id is a hash of (tree, parents, author, committer, message). Every commit sweworld makes
uses the same author and committer (``sweworld <sweworld@localhost>``), the same date
(2000-01-01T00:00:00+0000), no signature, no config from the user, and a tree written from an index
built by plumbing, so the id depends only on the files, the parent and the message.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from sweworld.core.errors import RepoError
from sweworld.repos.git import SHA_RE, git, resolve_commit

AUTHOR_NAME = "sweworld"
AUTHOR_EMAIL = "sweworld@localhost"
FIXED_DATE = "2000-01-01T00:00:00+0000"
_ZERO = "0" * 40
# ``info/attributes`` content that stores and checks out files byte for byte.
RAW_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"


def commit_env(date: str = FIXED_DATE) -> dict[str, str]:
    """Environment variables fixing author, committer and dates."""
    return {
        "GIT_AUTHOR_NAME": AUTHOR_NAME, "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL, "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": AUTHOR_NAME, "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL, "GIT_COMMITTER_DATE": date,
    }


def write_commit(git_dir: Path, tree: str, parents: Sequence[str], message: str, date: str = FIXED_DATE) -> str:
    """Create a commit object for ``tree`` with ``parents``; return its sha (no ref is moved)."""
    if not message.endswith("\n"):
        message += "\n"
    args: list[str] = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    return git(f"--git-dir={git_dir}", *args, "-F", "-", env=commit_env(date), input=message.encode("utf-8"),
               what=str(git_dir))


def keep(git_dir: Path, commit: str) -> None:
    """Point ``refs/sweworld/commits/<sha>`` at ``commit`` so gc keeps it and fetches by sha find it."""
    git(f"--git-dir={git_dir}", "update-ref", f"refs/sweworld/commits/{commit}", commit, what=str(git_dir))


def commit_directory(git_dir: Path, worktree: Path, message: str, parents: Sequence[str] = ()) -> str:
    """Commit every file under ``worktree`` (gitignored ones included) into ``git_dir``; return the sha.

    Uses a throw-away index, so ``git_dir`` may be bare; in-tree ``.gitattributes`` are neutralised by
    ``info/attributes`` (highest precedence): contents are stored byte for byte.
    """
    info = git_dir / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "attributes").write_text(RAW_ATTRIBUTES)
    with tempfile.TemporaryDirectory(prefix="sweworld-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        base = (f"--git-dir={git_dir}", f"--work-tree={worktree}")
        git(*base, "add", "-f", "-A", "--", ".", cwd=worktree, env=env, what=str(worktree))
        tree = git(*base, "write-tree", cwd=worktree, env=env, what=str(worktree))
    return write_commit(git_dir, tree, parents, message)


def _clean_path(path: str) -> str:
    pure = PurePosixPath(str(path).replace("\\", "/"))
    parts = [p for p in pure.parts if p not in ("", ".")]
    if pure.is_absolute() or not parts or ".." in parts or ".git" in parts:
        raise RepoError(f"bad path {path!r}: must be relative, inside the repository, not under .git")
    return "/".join(parts)


def commit_tree_changes(mirror: Path | str, parent_commit: str, files: Mapping[str, str | bytes | None],
                        message: str, *, date: str = FIXED_DATE) -> str:
    """Commit ``files`` on top of ``parent_commit`` in ``mirror``; return the new commit's sha.

    ``files`` maps a repository-relative path to its new content (``str`` is written as UTF-8) or to
    ``None`` to delete it. Existing files keep their mode (644/755); new ones are 644. The commit has
    the fixed identity and ``date``, so the same inputs give the same sha. The commit is kept
    reachable under ``refs/sweworld/commits/<sha>``; no branch moves. Nothing is checked out.
    """
    git_dir = Path(mirror)
    parent = resolve_commit(git_dir, parent_commit)
    if parent is None:
        raise RepoError(f"parent commit {parent_commit!r} not found in {git_dir}",
                        hint="pass a commit that exists in the mirror (RepoStore.mirror / pypi_repo)")
    changes = {_clean_path(path): content for path, content in files.items()}
    with tempfile.TemporaryDirectory(prefix="sweworld-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        base = f"--git-dir={git_dir}"
        git(base, "read-tree", parent, env=env, what=str(git_dir))
        listed = git(base, "ls-files", "-s", "-z", env=env, what=str(git_dir))
        modes = {}
        for record in filter(None, listed.split("\0")):
            meta, _, name = record.partition("\t")
            modes[name] = meta.split()[0]
        records = []
        for path in sorted(changes):
            content = changes[path]
            if content is None:
                if path not in modes:
                    raise RepoError(f"cannot delete {path!r}: not a file in commit {parent}")
                records.append(f"0 {_ZERO}\t{path}")
                continue
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            blob = git(base, "hash-object", "-w", "--no-filters", "--stdin", input=data, what=str(git_dir))
            mode = modes.get(path, "100644")
            records.append(f"{mode if mode in ('100644', '100755') else '100644'} {blob}\t{path}")
        payload = "".join(record + "\0" for record in records).encode("utf-8")
        git(base, "update-index", "-z", "--index-info", input=payload, env=env, what=str(git_dir))
        tree = git(base, "write-tree", env=env, what=str(git_dir))
    commit = write_commit(git_dir, tree, [parent], message, date)
    if not SHA_RE.match(commit):
        raise RepoError(f"git commit-tree returned {commit!r}", where=str(git_dir))
    keep(git_dir, commit)
    return commit
