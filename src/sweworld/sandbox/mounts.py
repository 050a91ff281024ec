"""What a sandbox mounts: layers under a private upper (``Layers``) or a host directory (``Dir``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Layers:
    """A copy-on-write mount: read-only ``lowers`` (top first) and a writable upper.

    ``upper=None`` gives the episode a private upper that is deleted on close; a path keeps what the
    episode wrote there (environment builds use this to produce a reusable layer).
    """

    lowers: list[Path]
    upper: Path | None = None


@dataclass
class Dir:
    """A host directory mounted as it is."""

    path: Path
    writable: bool = False
