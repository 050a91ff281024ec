"""``Sandbox``'s snapshot, fork, restore and release (``protocols.Branchable``; ``docs/branching.md``).

A fork is opened one of two ways:

- **into a spare**: a sandbox over the episode's own base layers, started ahead (after the
  episode's first fork, ``SandboxConfig.fork_spares`` of them), is made the snapshot's state the way
  ``restore`` does it (the snapshot's changes written through its own view). A fork then costs what
  the snapshot changed, not a sandbox's start;
- **stacked**: a new sandbox whose overlays stack the snapshot's frozen layers under a fresh upper.
  Used when no spare is kept (copy workspaces, ``fork_spares=0``) and when the snapshot changed more
  than ``SPARE_BYTES`` (a build directory is not copied again: it is shared as a layer).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from sweworld.core.errors import SandboxError, SnapshotError
from sweworld.sandbox import freeze, snapshots
from sweworld.sandbox.mounts import Layers
from sweworld.sandbox.snapshots import Snapshot

if TYPE_CHECKING:
    from sweworld.sandbox.sandbox import Sandbox

SPARE_BYTES = 4 * 2**20
"""A snapshot whose changes weigh more than this is forked stacked, not written into a spare."""
_SPARES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sweworld-spare")
"""Makes spares off the caller's path (the sandbox itself starts on ``sandbox._STARTER``'s threads)."""


class Branches:
    """The branching half of ``Sandbox`` (a mixin: it reads the sandbox's resources and layout)."""

    def branching_unsupported(self: Sandbox) -> str | None:
        """Every sandbox branches (a copy workspace by whole copies)."""
        return None

    def snapshot(self: Sandbox) -> Snapshot:
        """The episode's files (its upper layers and ``/tmp``) and its shell's cwd and exports, now.
        What it holds on disk counts toward ``config.disk`` with the upper layers themselves."""
        self._live()
        with self._branch_lock:
            handle = snapshots.take(self.episode_dir.name, self._uppers, self.episode_dir / "tmp",
                                    self._res.inherited, full=self.workspace_mode == "copy", previous=self._res.last)
            self._res.handles[handle.id] = handle
            self._res.last = handle
        held = handle.upper_bytes + sum(h.bytes for h in self._res.handles.values())
        if self.config.disk is not None and held > self.config.disk:
            self.release(handle)
            raise SnapshotError(f"snapshot refused: episode {self.label or self.episode_dir.name} would hold "
                               f"{held / 2**20:.1f} MiB with its snapshots, over its disk limit of "
                               f"{self.config.disk / 2**20:.1f} MiB",
                               hint="release snapshots no longer needed (release(handle)), or raise the "
                               "sandbox config's disk limit")
        return handle

    def fork(self: Sandbox, handle: Snapshot | None = None) -> Sandbox:
        """A new live episode in ``handle``'s state (``None``: a snapshot of now, released once the
        child has it); the two never see each other's later writes. No process is copied."""
        own = handle is None
        handle = self.snapshot() if handle is None else handle
        handle.check()
        try:
            child = self._into_spare(handle)
            if child is None:
                child = self._sibling(snapshot=handle)
                child.info["fork"] = "stacked"
            else:
                child.info["fork"] = "into a spare"
            self._keep_spares()
            child.setup = self.setup
            child._set_up_again()
            return child
        finally:
            if own:
                self.release(handle)

    def _sibling(self: Sandbox, snapshot: Snapshot | None = None) -> Sandbox:
        """A new sandbox over this one's mounts, each with a private upper of its own."""
        mounts = {target: Layers(list(spec.lowers)) if isinstance(spec, Layers) else spec
                  for target, spec in self._mounts.items()}
        return type(self)(mounts, config=self.config, base_commit=self.base_commit, workdir=self.workdir,
                       ro_paths=self._ro_paths, label=f"{self.label or self.episode_dir.name}/fork", snapshot=snapshot)

    def _keep_spares(self: Sandbox) -> None:
        if self.workspace_mode == "copy":
            return
        with self._branch_lock:
            while len(self._res.spares) < self.config.fork_spares:
                self._res.spares.append(_SPARES.submit(self._sibling))

    def _into_spare(self: Sandbox, handle: Snapshot) -> Sandbox | None:
        with self._branch_lock:  # forks of one episode from several threads each take their own spare
            future = self._res.spares.pop(0) if self._res.spares and not handle.full else None
        if future is None:
            return None
        try:
            spare = future.result()
        except Exception:  # a spare that could not be made: the fork is made stacked, and says why if it fails too
            return None
        try:
            request, _plan = snapshots.restore_request(handle, spare._uppers, spare.episode_dir / "tmp", own=False,
                                                       limit=SPARE_BYTES)
        except freeze.TooLarge:
            with self._branch_lock:
                self._res.spares.insert(0, future)
            return None
        try:
            spare._put_back(request, handle)
        except BaseException:
            spare.close()
            raise
        return spare

    def _put_back(self: Sandbox, request: dict, handle: Snapshot) -> None:
        reply = self._live().request(request, 600)
        if "error" in reply:
            raise SandboxError(f"restoring snapshot {handle.id} failed: {reply['error'].decode()}: "
                               f"{reply.get('message', b'').decode(errors='replace')}")

    def _own(self: Sandbox, handle: Snapshot, verb: str) -> None:
        handle.check()
        if self._res.handles.get(handle.id) is not handle:
            raise SnapshotError(f"snapshot {handle.id} was taken by episode {handle.episode}, not by "
                               f"{self.episode_dir.name}: an episode can {verb} only its own snapshots",
                               hint="fork(handle) opens a new episode from another episode's snapshot")

    def restore(self: Sandbox, handle: Snapshot) -> None:
        """Back to ``handle``: files written since are gone, files deleted since are back, the shell
        starts again in its cwd with its exports, and every process the episode runs is ended."""
        self._own(handle, "restore")
        with self._branch_lock:
            request, _plan = snapshots.restore_request(handle, self._uppers, self.episode_dir / "tmp")
            self._put_back(request, handle)
        self._set_up_again()

    def _set_up_again(self: Sandbox) -> None:
        """``setup`` run again: the processes it started (local stand-ins of network services) are
        not copied by a fork and are ended by a restore."""
        if not self.setup:
            return
        done = self.run(self.setup, timeout=120)
        if not done.ok:
            raise SandboxError(f"the episode's set-up failed when run again after a fork or restore: "
                               f"{done.output[-1500:]}")

    def release(self: Sandbox, handle: Snapshot) -> None:
        """Free what ``handle`` holds on disk (its layers stay while a fork of it lives)."""
        if handle.released:
            return
        self._own(handle, "release")
        snapshots.release(self._res.handles, handle)
