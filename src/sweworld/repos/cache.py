"""Cache building blocks: directories under ``$SWEWORLD_HOME/repos``, file locks, atomic publishing.

Every cached artefact (mirror, sdist, base tree) is built under a lock in a temporary directory next
to its final place, then renamed into place: a reader sees either nothing or the finished artefact,
and two processes never build the same one (the second waits, then finds it done).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock

from sweworld import paths


def repos_root(root: Path | str | None = None) -> Path:
    """``root`` or ``$SWEWORLD_HOME/repos``, created."""
    path = Path(root).expanduser().resolve() if root is not None else paths.subdir("repos")
    path.mkdir(parents=True, exist_ok=True)
    return path


def area(root: Path, name: str) -> Path:
    """A sub-area of the repos cache (``mirrors``, ``sdists``, ``trees``, ``locks``), created."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(root: Path, key: str, timeout: float = -1) -> Iterator[None]:
    """Hold the inter-process file lock named by ``key`` (any string) under ``root/locks``."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    readable = "".join(c if c.isalnum() or c in "._-" else "_" for c in key)[:80]
    lock = FileLock(str(area(root, "locks") / f"{readable}-{digest}.lock"), timeout=timeout)
    with lock:
        yield


def _make_writable(func: Callable[[str], object], path: str, _exc: object) -> None:
    """``rmtree`` error handler: a read-only directory is made writable and the call retried. A file
    keeps its mode: unlinking needs only its directory, and it may be a hard link shared with
    another base tree (``share.py``)."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, stat.S_IRWXU)
    func(path)


def remove_tree(path: Path) -> None:
    """Remove ``path`` (file, link or directory), read-only files included; missing is fine."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=_make_writable)
        else:
            shutil.rmtree(path, onerror=_make_writable)


@contextlib.contextmanager
def staging(final: Path) -> Iterator[Path]:
    """A fresh temporary directory next to ``final``; removed on exit unless published.

    Publish with :func:`publish` inside the ``with`` block.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name[:40]}-", dir=final.parent))
    try:
        yield tmp
    finally:
        if tmp.exists():
            remove_tree(tmp)


def publish(tmp: Path, final: Path) -> None:
    """Atomically move the finished ``tmp`` to ``final`` (an unfinished leftover is replaced)."""
    if final.exists() or final.is_symlink():
        remove_tree(final)
    os.replace(tmp, final)
