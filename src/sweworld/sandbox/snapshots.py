"""Snapshots of a live sandbox: the handles, the frozen directories they share, and the restore request.

A snapshot is one episode directory of its own (``workdirs``: an ``owner.json``, so a crashed
process's snapshots are swept and ``sweworld env gc`` reclaims them) holding a frozen copy of each
upper layer (``m<n>``, ``freeze.freeze``) and of ``/tmp`` (``tmp``, the server's own state left
out), with the shell's cwd and exports beside. It is shared: by its handle and by every episode
forked from it, whose overlays stack it as a lower layer; it is removed when the last of them lets go
(``Frozen``). A fork of a fork stacks its parent's layers too (``Snapshot.layers``), so a snapshot
never copies what an ancestor already froze.

In a copy workspace (no overlays) the upper is the whole tree, and so is each snapshot of it.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.errors import SnapshotError
from sweworld.core.paths import remove_tree
from sweworld.sandbox import freeze, workdirs

TMP = "tmp"
STATE = ".sweworld"
"""The server's directory in ``/tmp`` (its files, the shell's cwd and exports): never frozen as a file."""
_LOCK = threading.Lock()


class Frozen:
    """One snapshot's directory, removed when its last holder (a handle, a forked episode) drops it."""

    def __init__(self, path: Path):
        self.path = path
        self.refs = 1

    def acquire(self) -> Frozen:
        with _LOCK:
            if self.refs <= 0:
                raise SnapshotError(f"snapshot {self.path.name} was already released")
            self.refs += 1
        return self

    def drop(self) -> None:
        with _LOCK:
            self.refs -= 1
            gone = self.refs == 0
        if gone:
            remove_tree(self.path)


@dataclass(eq=False)
class Snapshot:
    """A handle: an episode's files and shell state at one moment (``Sandbox.snapshot``).

    ``bytes``: the disk it holds of its own (what changed since the episode's previous snapshot);
    ``upper_bytes``: the size of the episode's upper layers when it was taken."""

    id: str
    episode: str
    frozen: Frozen
    stack: list[Frozen]
    stamp_ns: int
    full: bool
    cwd: bytes
    env: bytes
    bytes: int = 0
    upper_bytes: int = 0
    files: int = 0
    released: bool = field(default=False)

    def layers(self, n: int) -> list[Path]:
        """Mount ``n``'s layers, top first, to stack over its own lowers (a copy workspace: the tree)."""
        if self.full:
            return [self.frozen.path / f"m{n}"]
        return [f.path / f"m{n}" for f in (self.frozen, *self.stack)]

    def holders(self) -> list[Frozen]:
        return [self.frozen] if self.full else [self.frozen, *self.stack]

    def check(self) -> None:
        if self.released:
            raise SnapshotError(f"snapshot {self.id} of episode {self.episode} was released",
                               hint="take a new snapshot; a released handle holds nothing any more")


@dataclass
class Upper:
    """A writable layer of a live episode: mount ``n`` at ``target``, its host ``upper`` and the
    layers under it that a restore compares against (none in a copy workspace)."""

    n: int
    target: str
    upper: Path
    lowers: list[Path]


def take(episode: str, uppers: list[Upper], tmp: Path, stack: list[Frozen], *, full: bool,
         previous: Snapshot | None) -> Snapshot:
    """Freeze ``uppers`` and ``tmp`` into a new snapshot directory (see the module docstring)."""
    path = workdirs.create()
    frozen = Frozen(path)
    try:
        stamp = freeze.stamp(path)
        prev = previous if previous is not None and not previous.released else None
        total = freeze.Copied()
        for up in [*uppers, Upper(-1, "/tmp", tmp, [])]:
            name = TMP if up.n < 0 else f"m{up.n}"
            copied = freeze.freeze(up.upper, path / name, previous=prev.frozen.path / name if prev else None,
                                   previous_stamp=prev.stamp_ns if prev else 0,
                                   skip=frozenset({STATE}) if up.n < 0 else frozenset())
            total.bytes += copied.bytes
            total.files += copied.files
            total.size += copied.size
        state = tmp / STATE
        return Snapshot(uuid.uuid4().hex[:12], episode, frozen, [f.acquire() for f in stack], stamp, full,
                        _read(state / "cwd"), _read(state / "env.sh"), total.bytes, total.size, total.files)
    except BaseException:
        frozen.drop()
        raise


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def seed(snapshot: Snapshot, tmp: Path) -> None:
    """A new episode's ``/tmp`` and shell state from ``snapshot``, before it starts."""
    freeze.freeze(snapshot.frozen.path / TMP, tmp)
    state = tmp / STATE
    state.mkdir(exist_ok=True)
    (state / "cwd").write_bytes(snapshot.cwd)
    (state / "env.sh").write_bytes(snapshot.env)


def restore_request(snapshot: Snapshot, uppers: list[Upper], tmp: Path, *, own: bool = True,
                    limit: int | None = None) -> tuple[dict, freeze.Plan]:
    """The server's ``restore`` request that puts ``uppers`` and ``/tmp`` back to ``snapshot``.
    ``own``: the snapshot was taken of these uppers (over the same layers); else (a fresh episode
    over the snapshot's base layers being made its fork) the snapshot's whole stack is applied.
    ``limit``: ``freeze.TooLarge`` when the files to write weigh more."""
    plan = freeze.Plan(limit=limit)
    for up in uppers:
        then = [snapshot.frozen.path / f"m{up.n}"] if own else snapshot.layers(up.n)
        freeze.rewind(plan, now=[up.upper], then=then, lowers=up.lowers, stamp_ns=snapshot.stamp_ns, target=up.target)
    freeze.rewind(plan, now=[tmp], then=[snapshot.frozen.path / TMP], lowers=[], stamp_ns=snapshot.stamp_ns,
                  target="/tmp", skip=frozenset({STATE}))
    request: dict = {"op": "restore", "n": len(plan.ops), "env": snapshot.env, "cwd": snapshot.cwd}
    for i, (kind, path, data, mode, mtime) in enumerate(plan.ops):
        request.update({f"k{i}": kind, f"p{i}": path, f"d{i}": data or None, f"m{i}": mode or None,
                        f"t{i}": mtime or None})
    return request, plan


def release_all(handles: dict[str, Snapshot]) -> None:
    for handle in list(handles.values()):
        release(handles, handle)


def release(handles: dict[str, Snapshot], handle: Snapshot) -> None:
    """Free ``handle`` (once; a second release does nothing)."""
    if handle.released:
        return
    handle.released = True
    handles.pop(handle.id, None)
    handle.frozen.drop()
    for held in handle.stack:
        held.drop()
