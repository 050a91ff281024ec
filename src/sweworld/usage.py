"""When a cached artefact (an environment, a base tree) was last used, for ``sweworld env gc``.

The stamp is a hidden file next to the artefact, ``.<name>.used``, touched on every use; it stays
outside the artefact because a base tree or a venv may be mounted (read-only, as an overlay lower)
while it is touched. An artefact never stamped counts as used when it was built (its mtime).
"""

from __future__ import annotations

import contextlib
from pathlib import Path


def stamp(path: Path) -> Path:
    return path.with_name(f".{path.name}.used")


def mark_used(path: Path) -> Path:
    """Record that ``path`` is used now; returns ``path`` (never fails: the stamp is advisory)."""
    with contextlib.suppress(OSError):
        stamp(path).touch()
    return path


def last_used(path: Path) -> float:
    """The last use of ``path`` (epoch seconds): its stamp, else its own mtime."""
    for candidate in (stamp(path), path):
        with contextlib.suppress(OSError):
            return candidate.stat().st_mtime
    return 0.0


def forget(path: Path) -> None:
    """Drop the stamp of a removed artefact."""
    stamp(path).unlink(missing_ok=True)
