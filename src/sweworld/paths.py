"""Where sweworld keeps its caches: ``$SWEWORLD_HOME`` (default ``~/.cache/sweworld``)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The root of every sweworld cache; created on first use."""
    root = os.environ.get("SWEWORLD_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sweworld")
    path = Path(root).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def subdir(*parts: str) -> Path:
    """A directory under :func:`home`, created on first use."""
    path = home().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
