"""Episode directories (``$SWEWORLD_HOME/episodes/<id>``) and the processes that own them.

A sandbox removes its directory on close, but a process killed by SIGKILL (or an episode nobody
closed) leaves it behind. Each directory is therefore created whole, by renaming a staging
directory that already holds ``owner.json``: the owner's pid, its start time (``/proc/<pid>/stat``,
so a reused pid is not mistaken for the owner), the boot id and pid namespace it was seen in, and
the cache paths the episode mounts (so ``sweworld env gc`` never removes what a live episode uses).
``sweep`` removes the directories whose owner is gone; each process sweeps once, before its first
episode (as ``pids.py`` does for the pids cgroups of killed processes).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from pathlib import Path

from sweworld.core import paths
from sweworld.core.paths import remove_tree

OWNER_FILE = "owner.json"
#: A directory without ``owner.json`` (made by an older sweworld, or a staging directory caught
#: between mkdir and write) is left alone this long.
UNOWNED_GRACE_S = 3600.0


def root() -> Path:
    return paths.subdir("episodes")


def _read(path: str) -> str:
    with contextlib.suppress(OSError):
        return Path(path).read_text().strip()
    return ""


def start_time(pid: int) -> str:
    """Field 22 of ``/proc/<pid>/stat`` (clock ticks after boot); "" when there is no such process."""
    stat = _read(f"/proc/{pid}/stat")
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else ""


def _pid_ns() -> str:
    with contextlib.suppress(OSError):
        return os.readlink("/proc/self/ns/pid")
    return ""


def owner_record(uses: list[str] | None = None, *, keep: bool = False) -> dict:
    """``owner.json`` of an episode opened now by this process."""
    return {"pid": os.getpid(), "start_time": start_time(os.getpid()), "boot_id": _read("/proc/sys/kernel/random/boot_id"),
            "pid_ns": _pid_ns(), "uses": uses or [], "keep": keep, "created": time.time()}


def read_owner(directory: Path) -> dict | None:
    try:
        data = json.loads((directory / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def owner_state(owner: dict) -> str:
    """``alive``, ``gone`` or ``unknown`` (the owner ran in another pid namespace: nothing can be said)."""
    if owner.get("boot_id") and owner["boot_id"] != _read("/proc/sys/kernel/random/boot_id"):
        return "gone"  # rebooted since
    if owner.get("pid_ns") and owner["pid_ns"] != _pid_ns():
        return "unknown"
    pid = owner.get("pid")
    if not isinstance(pid, int):
        return "gone"
    now, then = start_time(pid), str(owner.get("start_time") or "")
    return "alive" if now and (not then or now == then) else "gone"


def create(uses: list[str] | None = None, *, keep: bool = False) -> Path:
    """A new episode directory with its ``owner.json``, published by one rename."""
    sweep_once()
    base = root()
    name = uuid.uuid4().hex[:16]
    staging = base / f".{name}.new"
    staging.mkdir()
    try:
        (staging / OWNER_FILE).write_text(json.dumps(owner_record(uses, keep=keep)))
    except BaseException:  # e.g. no file descriptor left: nothing stays behind for the next sweep
        remove_tree(staging)
        raise
    final = base / name
    os.replace(staging, final)
    return final


def orphans(base: Path | None = None) -> list[tuple[Path, str]]:
    """Episode directories nobody will remove, with the reason; kept (``keep=True``) ones excluded."""
    found = []
    for directory in sorted((base or root()).iterdir()):
        if not directory.is_dir() or directory.is_symlink():
            continue
        owner = read_owner(directory)
        if owner is None:
            with contextlib.suppress(OSError):
                if time.time() - directory.stat().st_mtime > UNOWNED_GRACE_S:
                    found.append((directory, "no owner recorded (left by an older sweworld)"))
            continue
        if not owner.get("keep") and owner_state(owner) == "gone":
            found.append((directory, f"owner pid {owner.get('pid')} is gone"))
    return found


def live_uses(base: Path | None = None) -> list[Path]:
    """The cache paths mounted by episodes whose owner is (or may be) alive."""
    uses: list[Path] = []
    for directory in (base or root()).iterdir():
        owner = read_owner(directory) if directory.is_dir() else None
        if owner is not None and owner_state(owner) != "gone":
            uses += [Path(p) for p in owner.get("uses", [])]
    return uses


def remove(directory: Path) -> bool:
    """Claim ``directory`` by a rename (so two sweepers never fight over it), then delete it."""
    claimed = directory.with_name(f".{directory.name}.gc-{os.getpid()}")
    try:
        os.replace(directory, claimed)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        remove_tree(claimed)
    return True


def sweep(base: Path | None = None) -> list[Path]:
    """Remove every orphaned episode directory; returns those removed."""
    return [directory for directory, _why in orphans(base) if remove(directory)]


_SWEPT: set[Path] = set()
_SWEPT_LOCK = threading.Lock()


def sweep_once() -> None:
    """``sweep`` the first time this process opens an episode under the current ``$SWEWORLD_HOME``."""
    base = root()
    with _SWEPT_LOCK:
        if base in _SWEPT:
            return
        _SWEPT.add(base)
    sweep(base)
