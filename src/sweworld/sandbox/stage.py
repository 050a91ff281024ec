"""The mount stage: what runs in the sandbox's own user and mount namespace before bubblewrap, with
mount options that name no host path.

``/proc/<pid>/mountinfo`` is readable by every process of an episode. A bind mount shows there its
source's path on its filesystem (``/home/USER/.cache/sweworld/episodes/<id>/tmp``); an overlay shows
``/`` and its options as they were given. So the stage runs in the episode directory and names
every layer by a short relative name: the episode's own directories as they are (``upper0``,
``tmp``), anything outside through a link in ``l/`` (``lowerdir=l/0:l/1``). What would otherwise be
a bind from the cache (the ``/etc`` snapshot, the conda shim, the episode's ``/tmp`` and scratch
directories, read-only directories) is mounted as an overlay too (:func:`hide_sources`), and
bubblewrap binds the overlay.

Where overlays are refused (copy workspaces) the binds stay binds and their sources show.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.errors import SandboxError

LINKS = "l"
EMPTY = "e"
"""An empty directory of the episode: the second layer of a read-only overlay (one lower layer and
no upper is refused by kernels before 6.x) and the only layer of a writable one."""
WRAPPED = "m"
WORK = "w"


@dataclass
class Overlay:
    """A copy-on-write directory: ``lowers`` (top first) under a writable ``upper``, mounted on ``merged``
    and seen at ``target`` (``None``: a wrapped bind, bound by its ``Bind``). ``upper=None``: read-only."""

    target: str | None
    lowers: list[Path]
    upper: Path | None
    work: Path | None
    merged: Path


@dataclass
class Names:
    """Short names, relative to the stage's directory, for the paths the overlay options carry."""

    stage: Path
    links: dict[str, str] = field(default_factory=dict)

    def __call__(self, path: Path) -> str:
        path = Path(path)
        if path.is_relative_to(self.stage):
            name = str(path.relative_to(self.stage))
            if _plain(name):
                return name
        key = str(path)
        if key not in self.links:
            name = f"{LINKS}/{len(self.links)}"
            link = self.stage / name
            link.parent.mkdir(exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(key)
            self.links[key] = name
        return self.links[key]


def _plain(name: str) -> bool:
    return bool(name) and not any(ch in name for ch in ",:\\\n=")


def _absolute(path: Path) -> str:
    """An overlay option path given whole (no stage): refused where it would break the options."""
    text = str(path)
    if any(ch in text for ch in ",:\n"):
        raise SandboxError(f"path {text!r} contains ',', ':' or a newline, which overlay options cannot carry",
                           hint="set SWEWORLD_HOME to a directory whose path has none of them")
    return text


def mount_lines(overlays: list[Overlay], names: Names | None = None) -> list[str]:
    """The stage's ``mount`` commands; with ``names``, after a ``cd`` into ``names.stage``."""
    name = names or _absolute
    lines = [f"cd {shlex.quote(str(names.stage))}"] if names is not None and overlays else []
    for ov in overlays:
        opts = "userxattr,lowerdir=" + ":".join(name(p) for p in ov.lowers)
        if ov.upper is not None and ov.work is not None:
            opts += f",upperdir={name(ov.upper)},workdir={name(ov.work)}"
        lines.append(f"mount -t overlay overlay -o {shlex.quote(opts)} {shlex.quote(str(ov.merged))}")
    return lines


class Wrapper:
    """Turns binds of directories into overlays of the episode directory ``stage``."""

    def __init__(self, stage: Path):
        self.stage = stage
        self.overlays: list[Overlay] = []
        (stage / EMPTY).mkdir(exist_ok=True)

    def _merged(self, kind: str) -> Path:
        merged = self.stage / WRAPPED / f"{kind}{len(self.overlays)}"
        merged.mkdir(parents=True, exist_ok=True)
        return merged

    def read_only(self, lowers: list[Path], kind: str = "ro") -> Path:
        """An overlay of ``lowers`` (top first) that nothing can write; returns what to bind."""
        merged = self._merged(kind)
        self.overlays.append(Overlay(None, [*lowers, self.stage / EMPTY], None, None, merged))
        return merged

    def writable(self, upper: Path, kind: str = "rw") -> Path:
        """``upper`` (a directory of the episode, so on its filesystem) as an overlay's upper layer."""
        if not upper.is_relative_to(self.stage):
            raise SandboxError(f"{upper} is not in the episode directory {self.stage}")
        merged = self._merged(kind)
        work = self.stage / WORK / merged.name
        work.mkdir(parents=True, exist_ok=True)
        self.overlays.append(Overlay(None, [self.stage / EMPTY], upper, work, merged))
        return merged

