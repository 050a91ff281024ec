"""The command line that builds a sandbox: user+mount namespace, overlays, then bubblewrap.

Debian 12's bubblewrap (0.8) has no ``--overlay``, so the namespaces are composed deliberately:

1. ``unshare --user --map-root-user --mount`` gives a private mount namespace without root;
2. a tiny POSIX-sh stage mounts each overlay there (``userxattr``: unprivileged overlayfs, kernel
   >= 5.11) on an empty directory of the episode;
3. ``bwrap`` then builds the sandbox's root from read-only system directories, binds the merged
   overlays at their targets (``/testbed``, ``/sweworld/venv``), unshares pid, net, ipc and uts, and
   starts the in-sandbox server (``server.py``) with the host's interpreter, isolated (``-I -S``).

Everything dies with the host process (``--die-with-parent``); the overlays vanish with the mount
namespace; their upper directories stay on disk for the caller.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.errors import SandboxError
from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.etc import HOSTNAME, etc_snapshot
from sweworld.sandbox.frames import encode_msg

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SANDBOX_PATH = "/sweworld/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SERVER_FILES = ("server.py", "frames.py", "capture.py")
"""The in-sandbox server and the two modules it loads beside itself."""


@dataclass
class Overlay:
    """A copy-on-write directory: ``lowers`` (top first) under a writable ``upper``, seen at ``target``."""

    target: str
    lowers: list[Path]
    upper: Path
    work: Path
    merged: Path


@dataclass
class Bind:
    """A host directory seen at ``target`` inside the sandbox."""

    source: Path
    target: str
    writable: bool = False


@dataclass
class Layout:
    """Everything a sandbox mounts."""

    overlays: list[Overlay] = field(default_factory=list)
    binds: list[Bind] = field(default_factory=list)
    tmp: Path | None = None
    #: empty writable directories (``SandboxConfig.scratch_dirs``), bound right after /tmp for the same
    #: reason: host paths below one (an interpreter under /root) bound later stay visible
    scratch: list[Bind] = field(default_factory=list)
    ro_paths: list[str] = field(default_factory=list)
    workdir: str = "/testbed"


def check_path(path: Path | str) -> str:
    """Overlay options are comma- and colon-separated: refuse paths that would break them."""
    text = str(path)
    if any(ch in text for ch in ",:\n"):
        raise SandboxError(f"path {text!r} contains ',', ':' or a newline, which overlay options cannot carry",
                           hint="set SWEWORLD_HOME to a directory whose path has none of them")
    return text


def require(tool: str, package: str) -> str:
    found = shutil.which(tool)
    if not found:
        raise SandboxError(f"'{tool}' is not installed",
                           hint=f"install the '{package}' package (apt-get install {package}); "
                           "`make test`/`make demo` do it when run as root")
    return found


def overlay_mount_lines(overlays: list[Overlay]) -> list[str]:
    lines = []
    for ov in overlays:
        lower = ":".join(check_path(p) for p in ov.lowers)
        opts = f"userxattr,lowerdir={lower},upperdir={check_path(ov.upper)},workdir={check_path(ov.work)}"
        lines.append(f"mount -t overlay overlay -o {shlex.quote(opts)} {shlex.quote(str(ov.merged))}")
    return lines


def _mount_system(args: list[str]) -> None:
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind", str(etc_snapshot()), "/etc"]


def server_python() -> str:
    """The real interpreter behind ``sys.executable``: it runs the server with the stdlib only."""
    return os.path.realpath(sys.executable)


def interpreter_prefixes() -> list[str]:
    """The host interpreter running the in-sandbox server must be visible inside."""
    prefixes = {os.path.realpath(sys.base_prefix), str(Path(server_python()).parent.parent)}
    return sorted(p for p in prefixes if not p.startswith("/usr"))


def bwrap_args(layout: Layout, config: SandboxConfig) -> list[str]:
    args = [require("bwrap", "bubblewrap")]
    if config.isolation == "none":
        args += ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    if layout.tmp is not None:  # first: host paths below /tmp bound later stay visible above it
        args += ["--bind", str(layout.tmp), "/tmp"]
    for bind in layout.scratch:
        args += ["--bind", str(bind.source), bind.target]
    if config.isolation != "none":
        _mount_system(args)
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm",
                 "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--hostname", HOSTNAME, "--new-session"]
        if not config.network:
            args.append("--unshare-net")
        for path in [*interpreter_prefixes(), *layout.ro_paths, *config.ro_paths]:
            args += ["--ro-bind", path, path]
    for ov in layout.overlays:
        args += ["--bind", str(ov.merged), ov.target]
    for bind in layout.binds:
        args += ["--bind" if bind.writable else "--ro-bind", str(bind.source), bind.target]
    if config.isolation != "none":
        args += ["--remount-ro", "/"]
    args += ["--chdir", layout.workdir, "--die-with-parent", "--clearenv"]
    return args


def sandbox_env(config: SandboxConfig, workdir: str) -> dict[str, str]:
    """The scrubbed environment of every command: an allowlist, never the host's variables."""
    env = {
        "PATH": SANDBOX_PATH, "HOME": "/tmp/home", "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat",
        "VIRTUAL_ENV": "/sweworld/venv", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
        "PYTHONUNBUFFERED": "1", "TMPDIR": "/tmp", "SWEWORLD_WORKDIR": workdir,
    }
    for name in config.passthrough_env:
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(config.env)
    return env


def server_config(config: SandboxConfig, workdir: str) -> bytes:
    """The server's config frame (see ``server.load_config``)."""
    limits = {"RLIMIT_AS": config.memory, "RLIMIT_NPROC": config.processes, "RLIMIT_FSIZE": config.file_size,
              "RLIMIT_NOFILE": config.open_files, "RLIMIT_CORE": 0}
    msg: dict[str, object] = {"cwd": workdir, "persistent": config.persistent, "output_cap": config.output_cap,
                              "pid_namespace": config.isolation != "none"}
    msg.update({f"env:{k}": v for k, v in sandbox_env(config, workdir).items()})
    msg.update({f"limit:{k}": v for k, v in limits.items()})
    return encode_msg(msg)


def command(layout: Layout, config: SandboxConfig) -> list[str]:
    """The full argv: unshare, mount the overlays, exec bwrap, start the server."""
    if layout.tmp is None:
        raise SandboxError("a sandbox layout needs a tmp directory")
    state = layout.tmp / ".sweworld"
    state.mkdir(parents=True, exist_ok=True)
    for name in SERVER_FILES:
        shutil.copyfile(Path(__file__).with_name(name), state / name)
    (state / "config").write_bytes(server_config(config, layout.workdir))
    server = [server_python(), "-I", "-S", "/tmp/.sweworld/server.py", "/tmp/.sweworld/config"]
    stage = ["set -e", *overlay_mount_lines(layout.overlays),
             "exec " + shlex.join([*bwrap_args(layout, config), "--", *server])]
    unshare = require("unshare", "util-linux")
    return [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
            "/bin/sh", "-c", "\n".join(stage)]


@functools.cache
def overlay_support() -> tuple[bool, str]:
    """Whether an unprivileged overlay mount works here (probed once per process)."""
    try:
        unshare = require("unshare", "util-linux")
    except SandboxError as exc:
        return False, exc.message
    with tempfile.TemporaryDirectory(prefix="sweworld-probe-") as tmp:
        root = Path(tmp)
        for name in ("lower", "upper", "work", "merged"):
            (root / name).mkdir()
        ov = Overlay("/x", [root / "lower"], root / "upper", root / "work", root / "merged")
        script = "set -e\n" + "\n".join(overlay_mount_lines([ov]))
        try:
            proc = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", script],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
    if proc.returncode != 0:
        return False, (proc.stderr or proc.stdout).strip()[-500:]
    return True, "overlayfs in a user namespace"
