"""The command line that builds a sandbox: user+mount namespace, overlays, then bubblewrap.

Debian 12's bubblewrap (0.8) has no ``--overlay``, so the namespaces are composed deliberately:

1. ``unshare --user --map-root-user --mount`` gives a private mount namespace without root;
2. a tiny POSIX-sh stage (``stage.py``) mounts each overlay there (``userxattr``: unprivileged
   overlayfs, kernel >= 5.11) on an empty directory of the episode, with options that name no host
   path;
3. ``bwrap`` then builds the sandbox's root from read-only system directories, binds the merged
   overlays at their targets (``/testbed``, ``/sweworld/venv``), unshares pid, net, ipc and uts, and
   starts the in-sandbox server (``server.py``) as the pid namespace's first process, with the
   host's interpreter, isolated (``-I -S``).

Nothing of the host reaches the episode through these processes: all three start with
``LAUNCH_ENV`` and nothing else (bubblewrap's ``--clearenv`` cleans only its child, while its own
environment stays readable in ``/proc``), bubblewrap reads its arguments (every host path it mounts)
from a memfd (``--args FD``, closed once read), and the server's standard error is a pipe, not a
host file. The episode runs with Docker's default capabilities at most (never ``CAP_SYS_ADMIN``:
no remounting its read-only binds writable) and sees ``/proc/sys`` read-only (host root mapped to
the episode's root would otherwise write the host's sysctls). bubblewrap loads the episode's seccomp
filter (``seccomp.py``: Docker's default denials, nested user namespaces included; ``--seccomp FD``,
a second memfd) on both routes, and the server joins a fresh session keyring before anything of the
episode runs (``kernel.py``): the launcher's keys are not the episode's.

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

from sweworld.core.errors import SandboxError
from sweworld.sandbox import seccomp, transplant
from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.diagnose import is_setuid
from sweworld.sandbox.etc import HOSTNAME, etc_snapshot
from sweworld.sandbox.frames import encode_msg
from sweworld.sandbox.stage import Names, Overlay, mount_lines

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SANDBOX_PATH = "/sweworld/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SERVER_FILES = ("server.py", "frames.py", "capture.py", "kernel.py")
"""The in-sandbox server and the modules it loads beside itself."""
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
"""The whole environment of unshare, the mount stage and bubblewrap: bubblewrap's processes keep it,
and the episode can read theirs (``/proc/<pid>/environ``), so never the host's."""
CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID",
                "CAP_SETUID", "CAP_SETPCAP", "CAP_SETFCAP", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                "CAP_NET_ADMIN", "CAP_SYS_CHROOT", "CAP_AUDIT_WRITE")
"""What the episode's root may do: Docker's default set but ``CAP_MKNOD`` (no device nodes in a user
namespace anyway), and ``CAP_NET_ADMIN`` over the episode's own network namespace, which reaches
nothing (the eval script's stand-ins route unreachable addresses to the loopback device, where a
connection hangs as on the internet). Without ``CAP_SYS_ADMIN`` nothing can be mounted or remounted
inside, so the read-only binds stay read-only; without ``CAP_SYS_PTRACE`` the server's ``/proc/1``
is out of reach."""
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/fs")
"""Bound read-only over the episode's ``/proc``, as Docker does. Their write checks compare uids,
not capabilities: run by root, the episode's root is the host's, and could set the host's sysctls
(``kernel.core_pattern``: code run as host root) or trigger sysrq."""


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
    #: what is bound at /tmp: ``tmp`` itself, or an overlay over it (``stage.Wrapper``)
    tmp_mount: Path | None = None
    #: what is bound at /etc: the host's snapshot (``etc.etc_snapshot``), or an overlay over it
    etc: Path | None = None
    #: the directory the mount stage runs in (``stage.Names``): the episode's; None: absolute paths
    stage: Path | None = None
    #: empty writable directories (``SandboxConfig.scratch_dirs``), bound right after /tmp for the same
    #: reason: host paths below one (an interpreter under /root) bound later stay visible
    scratch: list[Bind] = field(default_factory=list)
    ro_paths: list[str] = field(default_factory=list)
    workdir: str = "/testbed"
    #: an image's layers under the episode's upper, seen at ``/`` (an episode on an image): no host
    #: system directory is mounted, and the server's interpreter is transplanted (``transplant``)
    root: Overlay | None = None


def require(tool: str, package: str) -> str:
    found = shutil.which(tool)
    if not found:
        raise SandboxError(f"'{tool}' is not installed",
                           hint=f"install the '{package}' package (apt-get install {package}); "
                           "`make test`/`make demo` do it when run as root")
    return found


def overlay_mount_lines(overlays: list[Overlay], stage: Path | None = None) -> list[str]:
    """The stage's mount commands (``stage.mount_lines``): relative to ``stage`` when given."""
    return mount_lines(overlays, Names(stage) if stage is not None else None)


def _mount_system(args: list[str], etc: Path | None) -> None:
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind", str(etc or etc_snapshot()), "/etc"]


def _confine(args: list[str], caps: bool) -> None:
    """Read-only /proc/sys (and friends) and the capability set of the episode's processes (``caps``
    False: bubblewrap runs setuid for an ordinary user, drops them all itself and refuses the options)."""
    for path in PROC_READ_ONLY:
        args += ["--ro-bind-try", path, path]
    if caps:
        args += ["--cap-drop", "ALL"]
        for cap in CAPABILITIES:
            args += ["--cap-add", cap]


def server_python() -> str:
    """The real interpreter behind ``sys.executable``: it runs the server with the stdlib only."""
    return os.path.realpath(sys.executable)


def interpreter_prefixes() -> list[str]:
    """The host interpreter running the in-sandbox server must be visible inside."""
    prefixes = {os.path.realpath(sys.base_prefix), str(Path(server_python()).parent.parent)}
    return sorted(p for p in prefixes if not p.startswith("/usr"))


def bwrap_args(layout: Layout, config: SandboxConfig, *, pid1: bool = False) -> list[str]:
    """bubblewrap's options (without the program: ``--`` and the command follow). ``pid1``: the
    command is the pid namespace's first process (``--as-pid-1``) and reaps the orphans itself."""
    args = [require("bwrap", "bubblewrap")]
    caps = os.geteuid() == 0 or not is_setuid(args[0])
    if config.isolation == "none":
        args += ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    if layout.root is not None:  # first: everything else is mounted over the image
        args += ["--bind", str(layout.root.merged), "/"]
    tmp = layout.tmp_mount or layout.tmp
    if tmp is not None:  # first: host paths below /tmp bound later stay visible above it
        args += ["--bind", str(tmp), "/tmp"]
    for bind in layout.scratch:
        args += ["--bind", str(bind.source), bind.target]
    if config.isolation != "none" and layout.root is None:
        _mount_system(args, layout.etc)
    if config.isolation != "none":
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm",
                 "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--hostname", HOSTNAME, "--new-session"]
        _confine(args, caps)
        if pid1:
            args.append("--as-pid-1")
        if not config.network:
            args.append("--unshare-net")
        for path in [*([] if layout.root else interpreter_prefixes()), *layout.ro_paths, *config.ro_paths]:
            args += ["--ro-bind", path, path]
    for ov in layout.overlays:
        if ov.target is not None:
            args += ["--bind", str(ov.merged), ov.target]
    for bind in layout.binds:
        args += ["--bind" if bind.writable else "--ro-bind", str(bind.source), bind.target]
    if config.isolation != "none" and layout.root is None:  # an image's root is the episode's to write
        args += ["--remount-ro", "/"]
    args += ["--chdir", layout.workdir, "--die-with-parent", "--clearenv"]
    return args


IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""Docker's ``PATH`` for an image that sets none."""
NOT_ON_IMAGES = ("LANG", "LC_ALL", "VIRTUAL_ENV")
"""Left to the image (its ``Env``): a locale it may not have, a virtualenv that is not there."""


def sandbox_env(config: SandboxConfig, workdir: str, *, image: bool = False) -> dict[str, str]:
    """The scrubbed environment of every command: an allowlist, never the host's variables. On an
    image (``image``): what Docker gives a container (``PATH``, ``HOME=/root``) and no locale, the
    image's ``Env`` coming in through ``config.env``."""
    env = {
        "PATH": SANDBOX_PATH, "HOME": "/tmp/home", "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat",
        "VIRTUAL_ENV": "/sweworld/venv", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
        "PYTHONUNBUFFERED": "1", "TMPDIR": "/tmp", "SWEWORLD_WORKDIR": workdir,
    }
    if image:
        env = {k: v for k, v in env.items() if k not in NOT_ON_IMAGES} | {"PATH": IMAGE_PATH, "HOME": "/root"}
    for name in config.passthrough_env:
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(config.env)
    return env


def server_config(config: SandboxConfig, workdir: str, *, image: bool = False) -> bytes:
    """The server's config frame (see ``server.load_config``)."""
    limits = {"RLIMIT_AS": config.memory, "RLIMIT_NPROC": config.processes, "RLIMIT_FSIZE": config.file_size,
              "RLIMIT_NOFILE": config.open_files, "RLIMIT_CORE": 0}
    msg: dict[str, object] = {"cwd": workdir, "persistent": config.persistent, "output_cap": config.output_cap,
                              "pid_namespace": config.isolation != "none"}
    msg.update({f"env:{k}": v for k, v in sandbox_env(config, workdir, image=image).items()})
    msg.update({f"limit:{k}": v for k, v in limits.items()})
    return encode_msg(msg)


@dataclass
class Launch:
    """How a sandbox is started: ``argv``, then the number of a memfd holding bubblewrap's own
    arguments (``--args FD``: every host path it mounts, out of the episode's sight), then ``tail``."""

    argv: list[str]
    bwrap: list[str]
    tail: list[str] = field(default_factory=list)
    #: a pids cgroup's ``cgroup.procs``: the first process joins it, then execs the sandbox
    cgroup_procs: Path | None = None
    #: the seccomp filter bubblewrap loads (``--seccomp FD``, a second memfd); None: no filter
    seccomp: bytes | None = None

    def spawn(self, **popen) -> subprocess.Popen:
        """``subprocess.Popen`` of the sandbox with ``LAUNCH_ENV`` and the memfd. The cgroup is joined
        by a shell that then execs, never by a ``preexec_fn`` (which makes Python fork the whole host
        process, page tables and all, instead of ``vfork``: milliseconds per start, more the bigger
        the host process)."""
        fd = os.memfd_create("sweworld-bwrap-args", os.MFD_CLOEXEC)
        fds = [fd]
        argv = [*self.argv, str(fd), *self.tail]
        if self.cgroup_procs is not None:
            argv = ["/bin/sh", "-c", 'echo $$ > "$1" && shift && exec "$@"', "sweworld-cgroup",
                    str(self.cgroup_procs), *argv]
        try:
            bwrap = self.bwrap
            if self.seccomp is not None:
                fds.append(_memfd("sweworld-seccomp", self.seccomp))
                bwrap = [*bwrap, "--seccomp", str(fds[-1])]
            _fill(fd, b"".join(arg.encode() + b"\0" for arg in bwrap))
            return subprocess.Popen(argv, env=LAUNCH_ENV, pass_fds=tuple(fds), **popen)
        finally:
            for each in fds:
                os.close(each)


def _fill(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        _fill(fd, data)
    except BaseException:
        os.close(fd)
        raise
    return fd


def episode_filter(config: SandboxConfig) -> bytes | None:
    """The episode's seccomp filter (``seccomp.for_episode``): none without isolation."""
    if config.isolation == "none":
        return None
    return seccomp.for_episode(config.allow_syscalls)


def command(layout: Layout, config: SandboxConfig, route: str = "userns") -> Launch:
    """The sandbox's start. ``userns``: unshare, mount the overlays, exec bwrap (its arguments from the
    memfd), start the server. ``setuid-bwrap``: bwrap alone (setuid root: no user namespace, no
    overlays, no capabilities to set)."""
    if layout.tmp is None:
        raise SandboxError("a sandbox layout needs a tmp directory")
    state = layout.tmp / ".sweworld"
    state.mkdir(parents=True, exist_ok=True)
    for name in SERVER_FILES:
        shutil.copyfile(Path(__file__).with_name(name), state / name)
    (state / "config").write_bytes(server_config(config, layout.workdir, image=layout.root is not None))
    python = list(transplant.runtime(server_python()).argv) if layout.root is not None else [server_python()]
    server = [*python, "-I", "-S", "/tmp/.sweworld/server.py", "/tmp/.sweworld/config"]
    pid1 = config.isolation != "none"
    if route == "setuid-bwrap":
        if layout.overlays:
            raise SandboxError("overlay workspaces need a user namespace, which this host refuses",
                               hint="use the copy workspace (workspace 'auto' or 'copy')")
        bwrap = bwrap_args(layout, config, pid1=pid1)
        return Launch([bwrap[0], "--args"], bwrap[1:], ["--", *server], seccomp=episode_filter(config))
    bwrap = bwrap_args(layout, config, pid1=pid1)
    overlays = [*layout.overlays, *([layout.root] if layout.root is not None else [])]
    stage = ["set -e", *overlay_mount_lines(overlays, layout.stage),
             f'exec {shlex.quote(bwrap[0])} --args "$1" -- {shlex.join(server)}']
    unshare = require("unshare", "util-linux")
    return Launch([unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
                   "/bin/sh", "-c", "\n".join(stage), "sweworld-stage"], bwrap[1:], seccomp=episode_filter(config))


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
        script = "set -e\n" + "\n".join(overlay_mount_lines([ov], root))
        try:
            proc = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", script],
                                  capture_output=True, text=True, timeout=30, env=LAUNCH_ENV)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
    if proc.returncode != 0:
        return False, (proc.stderr or proc.stdout).strip()[-500:]
    return True, "overlayfs in a user namespace"
