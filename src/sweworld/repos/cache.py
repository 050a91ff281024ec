"""Cache building blocks: directories under ``$SWEWORLD_HOME/repos``, file locks, atomic publishing.

Every cached artefact (mirror, sdist, base tree) is built under a lock in a temporary directory next
to its final place, then renamed into place: a reader sees either nothing or the finished artefact,
and two processes never build the same one (the second waits, then finds it done).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock

from sweworld.core import paths
from sweworld.core.paths import remove_tree


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
