"""Where sweworld keeps its caches: ``$SWEWORLD_HOME`` (default ``~/.cache/sweworld``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from pathlib import Path

from sweworld.core.errors import ConfigError


def home() -> Path:
    """The root of every sweworld cache; created on first use.

    Raises:
        ConfigError: it cannot be a writable directory (a file, read-only, under a file...), naming
            ``SWEWORLD_HOME`` when that is what chose it.
    """
    chosen = os.environ.get("SWEWORLD_HOME")
    root = chosen or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sweworld")
    path = Path(root).expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
        problem = None if os.access(path, os.W_OK | os.X_OK) else "the directory is not writable"
    except FileExistsError:
        problem = "it is a file, not a directory"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    if problem is None:
        return path
    variable = "SWEWORLD_HOME" if chosen else "the cache directory (SWEWORLD_HOME unset)"
    raise ConfigError(f"{variable}={root}: cannot hold sweworld's caches: {problem}",
                      hint="point SWEWORLD_HOME at a writable directory (it is created when missing)")


def subdir(*parts: str) -> Path:
    """A directory under :func:`home`, created on first use."""
    path = home().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _writable_and_retry(func, path: str, exc: object) -> None:
    """``rmtree``'s error handler: the parent directory (and ``path`` when it is a directory, e.g. an
    overlay work dir created mode 000) are made writable and the step retried. A file keeps its mode:
    unlinking it needs only its directory, and it may be a hard link shared with another tree.

    A removal (``unlink``, ``rmdir``) is retried as it was called. Any other step failed on reading a
    directory (``os.open``, ``os.scandir``, ``os.lstat``: rmtree could not enter it, and they take more
    arguments than a path), so that directory is removed anew, now that it can be entered. Only an
    ordinary user meets this: root enters a mode-000 directory without asking."""
    opened = False
    with contextlib.suppress(OSError, NotImplementedError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, stat.S_IRWXU)
            opened = True
    if func in (os.unlink, os.remove, os.rmdir):
        func(path)
    elif opened:
        remove_tree(Path(path))
    else:  # not ours to open (another user's directory): the error rmtree met stands
        raise exc[1] if isinstance(exc, tuple) else exc  # onerror passes exc_info, onexc the exception


def remove_tree(path: Path) -> None:
    """Remove ``path`` (a file, a link or a directory), read-only and mode-000 directories included;
    a missing path is fine. The one removal every cache and sandbox uses."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=_writable_and_retry)
        else:
            shutil.rmtree(path, onerror=_writable_and_retry)
