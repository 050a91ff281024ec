"""``Sandbox``: the real ``Executor``, an isolated copy-on-write episode over shared layers."""

from __future__ import annotations

import contextlib
import functools
import logging
import shlex
import shutil
import stat
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core import overlayfs
from sweworld.core.errors import SandboxError
from sweworld.core.paths import remove_tree
from sweworld.core.types import ExecResult
from sweworld.sandbox import (
    conda_shim,
    diskbound,
    hostlimits,
    isolation,
    pids,
    route,
    snapshots,
    transplant,
    workdirs,
)
from sweworld.sandbox.branches import Branches
from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.etc import etc_snapshot
from sweworld.sandbox.isolation import Bind, Layout, Overlay
from sweworld.sandbox.mounts import Dir, Layers
from sweworld.sandbox.session import ServerSession
from sweworld.sandbox.snapshots import Frozen, Snapshot, Upper
from sweworld.sandbox.stage import Wrapper

log = logging.getLogger(__name__)

#: Never part of a diff: caches and build artefacts that test runs and installs leave behind.
DIFF_EXCLUDES = ("**/__pycache__/**", "**/*.pyc", "**/*.pyo", "**/.pytest_cache/**", "**/*.egg-info/**",
                 "**/.eggs/**", "**/.tox/**", "**/.mypy_cache/**", "**/.hypothesis/**")
"""Build caches left out of ``diff``. Every pattern starts with ``**/``: an exclude pathspec that
names an existing directory the repository's .gitignore ignores (``.eggs/**`` with ``.eggs``
ignored, as setup_requires leaves it) makes ``git add -A`` exit 1 ("The following paths are
ignored"), which failed the diff of every such episode."""
DIFF_CAP = 256 * 1024 * 1024


def _copy_layers(lowers: list[Path], dest: Path) -> None:
    """Materialise an overlay stack as a plain copy (bottom first; whiteouts delete)."""
    dest.mkdir(parents=True, exist_ok=True)
    for layer in reversed(lowers):
        for src in sorted(layer.rglob("*")):
            rel = src.relative_to(layer)
            target = dest / rel
            info = src.lstat()
            mode = info.st_mode
            if overlayfs.is_whiteout(src, info):
                remove_tree(target)
            elif stat.S_ISDIR(mode):
                if overlayfs.is_opaque(src):  # replaced whole: nothing of the layers below
                    remove_tree(target)
                target.mkdir(exist_ok=True)
            else:
                if target.is_dir() and not target.is_symlink():
                    remove_tree(target)
                shutil.copy2(src, target, follow_symlinks=False)


_STARTER = ThreadPoolExecutor(max_workers=16, thread_name_prefix="sweworld-sandbox-start")
"""Spawns sandboxes; its threads live as long as the process (see ``_Resources.start``)."""


@functools.cache
def _keyring_warning(why: str) -> None:
    """Once per process and cause: episodes share the launcher's session keyring (the seccomp filter
    still refuses the keyring's calls unless ``allow_syscalls`` names them)."""
    log.warning("episodes keep the launching process's session keyring (%s)", why)


@dataclass
class _Resources:
    """What a sandbox holds, apart from the sandbox object so that a finalizer can free it."""

    episode_dir: Path
    keep: bool
    session: ServerSession | None = None
    cgroup: pids.PidsCgroup | None = None
    starter: Future | None = None
    #: snapshots this episode took and has not released (``snapshots``), by id
    handles: dict[str, Snapshot] = field(default_factory=dict)
    #: the frozen layers under this episode's uppers (it was forked from a snapshot)
    inherited: list[Frozen] = field(default_factory=list)
    last: Snapshot | None = None
    #: sandboxes started ahead for this episode's next forks (``branches``)
    spares: list[Future[Sandbox]] = field(default_factory=list)
    #: the episode's disk and inode bounds (``diskbound``), measured while it lives; None: unbounded
    watch: diskbound.Watch | None = None

    def start(self, launch: isolation.Launch) -> None:
        """Start the sandbox's agent in the background: opening an episode returns at once and the
        namespaces come up while the caller does other work (an agent's first model call); the first
        operation waits for them (``started``). The start runs on a long-lived thread: bubblewrap's
        ``--die-with-parent`` kills the sandbox when the *thread* that spawned it ends."""
        def run() -> None:
            self.session = ServerSession(launch, self.episode_dir / "sandbox.log", self.watch)
            if self.session.keyring != "fresh":
                _keyring_warning(self.session.keyring)
        self.starter = _STARTER.submit(run)

    def started(self) -> None:
        """Wait for the background start; its failure is raised here (once)."""
        starter, self.starter = self.starter, None
        if starter is not None:
            starter.result()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
        starter, self.starter = self.starter, None
        if starter is not None:
            with contextlib.suppress(BaseException):
                starter.result()
        if self.session is not None:
            self.session.close()
            self.session = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        spares, self.spares = self.spares, []
        for spare in spares:
            with contextlib.suppress(BaseException):
                spare.result().close()
        snapshots.release_all(self.handles)
        self.last = None
        inherited, self.inherited = self.inherited, []
        for layer in inherited:
            layer.drop()
        if not self.keep and self.episode_dir.exists():
            remove_tree(self.episode_dir)


class Sandbox(Branches):
    """One isolated episode. Implements the ``Executor`` protocol.

    ``mounts`` maps a path inside the sandbox (``/testbed``, ``/sweworld/venv``) to ``Layers`` or
    ``Dir``. Namespaces are set up once, here; every command goes to the same agent and shell.
    """

    def __init__(self, mounts: dict[str, Layers | Dir], *, config: SandboxConfig | None = None,
                 base_commit: str | None = None, workdir: str = "/testbed",
                 ro_paths: list[str] | None = None, episode_dir: Path | None = None, label: str = "",
                 snapshot: Snapshot | None = None):
        """``snapshot``: start in that state (``fork``): its layers under each upper, its ``/tmp``
        and shell state copied in."""
        self.config = config or SandboxConfig()
        self.workdir = workdir
        self.base_commit = base_commit
        self.label = label
        if episode_dir is None:
            uses = [str(p) for spec in mounts.values()
                    for p in ([spec.path] if isinstance(spec, Dir) else [*spec.lowers, *filter(None, [spec.upper])])]
            episode_dir = workdirs.create(uses, keep=self.config.keep)
        self.episode_dir = episode_dir
        self.episode_dir.mkdir(parents=True, exist_ok=True)
        self._res = _Resources(self.episode_dir, self.config.keep)
        self._mounts, self._ro_paths, self._from = mounts, list(ro_paths or []), snapshot
        self._uppers: list[Upper] = []
        self._branch_lock = threading.Lock()
        #: what the episode's opener ran in its shell to set it up (``backends.real``: local stand-ins
        #: of network services), run again in a fork and after a restore (``branches``)
        self.setup: str | None = None
        # closed when forgotten too: on garbage collection or at interpreter exit (never leaks the directory)
        self._finalizer = weakref.finalize(self, self._res.close)
        if self.config.isolation == "none":
            log.warning("sandbox isolation is OFF (--isolation none): commands can write the host and use the network")
        try:
            if snapshot is not None:
                snapshot.check()
                self._res.inherited = [layer.acquire() for layer in snapshot.holders()]
            chosen = route.route()
            chosen.check()
            layout, self.workspace_mode = self._layout(mounts, ro_paths or [], chosen.kind)
            launch = isolation.command(layout, self.config, chosen.kind)
            self._res.watch = self._bound()
            hostlimits.prepare()
            if self.config.processes is not None and self.config.isolation != "none":
                self._res.cgroup = pids.PidsCgroup(self.config.processes)
                launch.cgroup_procs = self._res.cgroup.procs
            self._res.start(launch)
        except BaseException:
            self.close()
            raise
        self.info = {"isolation": self.config.isolation, "route": chosen.kind, "workspace": self.workspace_mode,
                     "process_limit": pids.enforcement(self.config.processes, chosen.kind)
                     if self.config.isolation != "none" else "none", "episode_dir": str(self.episode_dir),
                     "branching": "copies" if self.workspace_mode == "copy" else "overlay layers",
                     "disk_bound": diskbound.describe(self.config.disk, self.config.inodes),
                     "seccomp": "off" if launch.seccomp is None
                     else "docker-default" + "".join(f" -{n}" for n in sorted(self.config.allow_syscalls))}

    def _bound(self, unbounded: bool = False) -> diskbound.Watch | None:
        """The episode's bounds over everything it can write: its directory (uppers, ``/tmp``,
        scratch) and the uppers its caller placed elsewhere (its snapshots are checked when taken)."""
        bounds = diskbound.Bounds(self.config.disk, self.config.inodes)
        if bounds.disk is None and bounds.inodes is None and not unbounded:
            return None
        paths = [self.episode_dir, *(up.upper for up in self._uppers if not up.upper.is_relative_to(self.episode_dir))]
        return diskbound.Watch(self.label or self.episode_dir.name, paths, bounds)

    @property
    def keyring(self) -> str:
        """``"fresh"``: the episode's session keyring is its own (``kernel.py``); else why not."""
        self._res.started()
        return self._res.session.keyring if self._res.session is not None else "closed"

    def _layout(self, mounts: dict[str, Layers | Dir], ro_paths: list[str], kind: str) -> tuple[Layout, str]:
        mode = self.config.workspace
        if kind != "userns" and mode == "overlay":
            raise SandboxError("overlay workspaces need a user namespace, which this host refuses "
                               f"(route {kind})", hint="use workspace 'auto' or 'copy'")
        if mode == "auto" and kind != "userns":
            mode = "copy"
        elif mode == "auto":
            ok, why = isolation.overlay_support()
            mode = "overlay" if ok else "copy"
            if not ok:
                log.warning("overlay workspaces unavailable (%s); falling back to copies", why)
        layout = Layout(tmp=self.episode_dir / "tmp", ro_paths=list(ro_paths), workdir=self.workdir)
        layout.tmp.mkdir(exist_ok=True)
        if self._from is not None:
            snapshots.seed(self._from, layout.tmp)
        isolated = self.config.isolation != "none"
        image = mounts.get("/")
        if image is not None and (not isinstance(image, Layers) or mode != "overlay" or not isolated):
            raise SandboxError("an episode on an image (layers at /) needs overlay workspaces in a user namespace"
                               if isinstance(image, Layers) else "only an image's layers (Layers) can be mounted at /",
                               hint="run `sweworld doctor`: it says whether this host allows overlays in a user "
                               "namespace and what to change where it does not")
        # overlays name no host path in /proc/*/mountinfo, binds do: with overlays at hand, the
        # episode's cache-side binds become overlays too (stage.py)
        wrap = Wrapper(self.episode_dir) if mode == "overlay" and isolated else None
        if wrap is not None:
            layout.stage = self.episode_dir
            layout.tmp_mount = wrap.writable(layout.tmp, "tmp")
        etc_layers = [etc_snapshot()]
        if image is not None:  # the image's own /etc; the server's interpreter is brought in
            python = isolation.server_python()
            for source, target in transplant.runtime(python).binds:
                layout.binds.append(Bind(wrap.read_only([Path(source)], "host") if wrap else Path(source), target))
        elif self.config.hosts and isolated:
            extra = self.episode_dir / "etc"
            extra.mkdir(exist_ok=True)
            base = etc_snapshot() / "hosts"
            text = base.read_text(encoding="utf-8", errors="replace") if base.is_file() else "127.0.0.1 localhost\n"
            (extra / "hosts").write_text(text.rstrip("\n") + "\n" + "".join(
                f"{addr} {name}\n" for name, addr in self.config.hosts.items()))
            if wrap is None:
                layout.binds.append(Bind(extra / "hosts", "/etc/hosts", False))
            else:
                etc_layers.insert(0, extra)
        if wrap is not None and image is None:
            layout.etc = wrap.read_only(etc_layers, "etc")
        for n, target in enumerate(self.config.scratch_dirs if isolated else []):
            if target not in mounts:
                scratch = self.episode_dir / f"scratch{n}"
                scratch.mkdir(exist_ok=True)
                layout.scratch.append(Bind(wrap.writable(scratch, "scratch") if wrap else scratch, target, True))
        if self.config.conda_shim and isolated and conda_shim.MOUNT not in mounts and image is None:
            shim = conda_shim.shim_dir()
            layout.binds.append(Bind(wrap.read_only([shim], "shim") if wrap else shim, conda_shim.MOUNT, False))
        for n, (target, spec) in enumerate(mounts.items()):
            if isinstance(spec, Dir):
                hide = wrap is not None and not spec.writable and spec.path.is_dir()
                layout.binds.append(Bind(wrap.read_only([spec.path]) if hide else spec.path, target, spec.writable))
                continue
            upper = spec.upper or self.episode_dir / f"upper{n}"
            lowers = list(spec.lowers)
            if self._from is not None:
                lowers = self._from.layers(n) + ([] if self._from.full else lowers)
            if mode == "copy":
                _copy_layers(lowers, upper)
                layout.binds.append(Bind(upper, target, True))
                self._uppers.append(Upper(n, target, upper, []))
                continue
            work = (upper.parent / f".{upper.name}.work") if spec.upper else self.episode_dir / f"work{n}"
            merged = self.episode_dir / f"merged{n}"
            for d in (upper, merged):
                d.mkdir(parents=True, exist_ok=True)
            remove_tree(work)
            work.mkdir(parents=True)
            overlay = Overlay(target, lowers, upper, work, merged)
            self._uppers.append(Upper(n, target, upper, lowers))
            if target == "/":
                layout.root = overlay
            else:
                layout.overlays.append(overlay)
        if wrap is not None:
            layout.overlays = [*wrap.overlays, *layout.overlays]
        return layout, mode

    # -- Executor -----------------------------------------------------------------------------
    def _live(self) -> ServerSession:
        try:
            self._res.started()
        except BaseException:
            self.close()
            raise
        if self._res.session is None:
            raise SandboxError(f"sandbox {self.label or self.episode_dir.name} is closed")
        return self._res.session

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
            cap: int | None = None) -> ExecResult:
        """A command in the episode's shell; ``cap``: bytes of output kept this once (default: the config's)."""
        return self._live().run("run", command, cwd=cwd, timeout=timeout or self.config.timeout, cap=cap)

    async def arun(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                   cap: int | None = None) -> ExecResult:
        """``run`` for an event loop (``protocols.AsyncRun``): awaited on the loop, no thread between."""
        return await self._live().arun("run", command, cwd=cwd, timeout=timeout or self.config.timeout, cap=cap)

    def exec(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
             cap: int | None = None) -> ExecResult:
        """A stateless command (fresh ``bash -c``) that leaves the persistent shell untouched."""
        return self._live().run("exec", command, cwd=cwd, timeout=timeout or self.config.timeout, cap=cap)

    def disk_usage(self) -> diskbound.Usage:
        """What the episode holds now against its ``disk`` and ``inodes`` bounds (``diskbound``)."""
        watch = self._res.watch or self._bound(unbounded=True)
        assert watch is not None
        return diskbound.measure(watch.paths)

    def ping(self) -> dict[str, bytes]:
        """The server's ``ping`` reply: its pid and whether it made itself non-dumpable."""
        return self._live().request({"op": "ping"}, 10)

    def _path(self, path: str) -> str:
        return path if path.startswith("/") else f"{self.workdir}/{path}"

    def _file_op(self, payload: dict) -> dict[str, bytes]:
        reply = self._live().request(payload, 60)
        error = reply.get("error", b"").decode()
        if not error:
            return reply
        message = reply.get("message", b"").decode(errors="replace")
        errno_ = int(reply.get("errno") or 0)
        if error == "FileNotFoundError":
            raise FileNotFoundError(errno_, message, payload["path"])
        if error in ("IsADirectoryError", "NotADirectoryError", "PermissionError", "FileExistsError", "OSError"):
            raise OSError(errno_, message, payload["path"])
        raise SandboxError(f"file operation on {payload['path']} failed: {error}: {message}")

    def read_bytes(self, path: str) -> bytes:
        return self._file_op({"op": "read", "path": self._path(path)})["data"]

    def read_file(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def write_file(self, path: str, content: str | bytes) -> None:
        data = content.encode() if isinstance(content, str) else content
        self._file_op({"op": "write", "path": self._path(path), "data": data})

    def append_file(self, path: str, data: bytes) -> None:
        """``data`` added at the end of ``path`` (created when missing): a large file written in
        pieces, with only one piece in memory at a time."""
        self._file_op({"op": "write", "path": self._path(path), "data": data, "append": True})

    def diff(self) -> str:
        """The workspace against the base commit; build caches and what the install itself changed
        (``.git/info/sweworld-install-changes``, written by the instance build) are left out."""
        base = self.base_commit or "HEAD"
        excludes = " ".join(shlex.quote(f":(exclude,glob){p}") for p in DIFF_EXCLUDES)
        installed = ".git/info/sweworld-install-changes"
        script = (f"cd {shlex.quote(self.workdir)} && export GIT_INDEX_FILE=/tmp/.sweworld/diff-index && "
                  f"rm -f \"$GIT_INDEX_FILE\" && git read-tree {shlex.quote(base)} && "
                  f"git add -A -- . {excludes} >/dev/null && "
                  f"{{ [ ! -s {installed} ] || git reset -q {shlex.quote(base)} --pathspec-from-file={installed}; }} && "
                  f"git diff --cached --no-color --no-ext-diff --no-renames {shlex.quote(base)}")
        result = self.exec(script, timeout=300, cap=DIFF_CAP)
        if result.exit_code != 0 or result.truncated:
            raise SandboxError(f"git diff failed in {self.workdir} (exit {result.exit_code}): {result.output[-2000:]}")
        return result.output

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
