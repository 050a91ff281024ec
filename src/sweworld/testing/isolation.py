"""The sandbox's isolation, probed through any exec call: what each framework seam must keep.

``check_isolation(run)`` takes a callable that runs one shell command the way a framework does
(inspect's ``exec``, SWE-ReX's ``/execute``, an OpenHands terminal, Harbor's ``exec``) and returns
``(exit_code, output)``. It sets up on the host what a command must not reach, runs the probes
through ``run`` and returns the broken expectations (empty: isolated):

- network: a TCP server listening on the host's loopback is not reachable;
- host files: a file written on the host outside the episode's mounts is not readable;
- host processes: the calling process is not visible (own pid namespace);
- the host is read-only outside the workspace and tmp;
- limits: the memory (address space) and file-size limits are set for what the seam runs;
- host leaks: no process the episode can see carries the launching process's environment (the value
  of ``SWEWORLD_PROBE_SECRET``, planted there before the episode opened: ``host_secret``) or a path of
  sweworld's cache (``$SWEWORLD_HOME``: ``cache_paths``; overlay workspaces only, a copy workspace is a
  bind and shows its path) in its ``environ``, ``cmdline``, ``mountinfo`` or open file descriptors;
- confinement: the episode has no ``CAP_SYS_ADMIN`` (it could remount its read-only binds writable)
  and cannot write ``/proc/sys`` (run by root, it would set the host's sysctls);
- keyring: a key planted in the launching thread's session keyring (``testing.keyring``) can be
  neither read from the episode nor joined by a key the episode adds;
- system calls: the seccomp filter holds: no nested user namespace (``unshare``, ``clone`` with
  ``CLONE_NEWUSER``, util-linux's ``unshare -Ur``), no ``keyctl``, ``bpf``, ``perf_event_open``.
"""

from __future__ import annotations

import os
import shlex
import socket
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from sweworld.testing import keyring

Run = Callable[[str], tuple[int, str]]


def _listen() -> tuple[socket.socket, list[bool]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    accepted: list[bool] = []

    def accept() -> None:
        for _ in range(100):  # 20 s at most, then it stops by itself
            try:
                conn, _ = server.accept()
            except OSError:
                if server.fileno() == -1:
                    return
                continue
            accepted.append(True)
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, accepted


def _probe_network(run: Run) -> list[str]:
    server, accepted = _listen()
    port = server.getsockname()[1]
    try:
        _, out = run(f"python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', {port}), 3); "
                        f"print('CONNECTED')\" 2>&1 || true")
    finally:
        server.close()
    if "CONNECTED" in out or accepted:
        return [f"network: the host's loopback port {port} was reachable from the episode"]
    return []


def _probe_host_file(run: Run) -> list[str]:
    token = uuid.uuid4().hex
    root = Path(tempfile.mkdtemp(prefix="sweworld-probe-", dir=os.environ.get("SWEWORLD_PROBE_DIR") or "/var/tmp"))
    secret = root / "secret.txt"
    secret.write_text(token)
    try:
        _, out = run(f"cat {secret} 2>&1; ls {root} 2>&1; true")
    finally:
        secret.unlink(missing_ok=True)
        root.rmdir()
    return [f"host files: {secret} was readable from the episode"] if token in out else []


def _probe_host_processes(run: Run) -> list[str]:
    me = os.getpid()
    _, out = run(f"if [ -e /proc/{me}/cmdline ] && tr '\\0' ' ' < /proc/{me}/cmdline | grep -q python; "
                 f"then echo HOSTPID; fi; true")
    return [f"host processes: the host's pid {me} was visible from the episode"] if "HOSTPID" in out else []


def _probe_read_only_host(run: Run) -> list[str]:
    name = f"/usr/sweworld-probe-{uuid.uuid4().hex[:8]}"
    _, out = run(f"touch {name} 2>&1 && echo WROTE; true")
    written = Path(name).exists()
    if written:
        Path(name).unlink()
    return [f"host read-only: {name} could be written from the episode"] if written or "WROTE" in out else []


def _probe_limits(run: Run) -> list[str]:
    """The limits are in force for what the seam runs (read, not exhausted: a probe that allocated
    gigabytes would hurt the machine it runs on wherever the limit were missing)."""
    _, out = run("echo \"AS=$(ulimit -v) FSIZE=$(ulimit -f) NOFILE=$(ulimit -n)\"")
    broken = [f"limits: no {name} limit in the episode ({out.strip()[:80]!r})"
              for name, key in (("memory", "AS"), ("file-size", "FSIZE"))
              if f"{key}=unlimited" in out or f"{key}=" not in out]
    return broken


SECRET_VARIABLE = "SWEWORLD_PROBE_SECRET"
_LEAK_SCRIPT = ("for p in /proc/[0-9]*; do for f in environ cmdline mountinfo; do "
                "tr '\\0' '\\n' < $p/$f 2>/dev/null; done; for fd in $p/fd/*; do readlink $fd 2>/dev/null; done; "
                "done; true")


def _cache_home() -> str:
    chosen = os.environ.get("SWEWORLD_HOME")
    root = chosen or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sweworld")
    return os.path.realpath(root)


def _probe_host_secret(run: Run) -> list[str]:
    secret = os.environ.get(SECRET_VARIABLE)
    if not secret:
        return []
    _, out = run(_LEAK_SCRIPT)
    return [f"host leaks: the launching process's {SECRET_VARIABLE} is readable in the episode's /proc"] \
        if secret in out else []


def _probe_cache_paths(run: Run) -> list[str]:
    """Overlay workspaces only: a copy workspace (overlay refused) is bound, and a bind shows its path."""
    _, out = run(_LEAK_SCRIPT)
    home = _cache_home()
    leaked = sorted({line.strip()[:200] for line in out.splitlines() if home in line})
    return [f"host leaks: sweworld's cache path {home} is named in the episode's /proc: {leaked[:3]}"] if leaked else []


def _probe_confinement(run: Run) -> list[str]:
    _, out = run("grep '^CapEff' /proc/self/status; [ -w /proc/sys/kernel/core_pattern ] && echo SYSCTL-WRITABLE; true")
    broken = []
    caps = out.split("CapEff:")[-1].split()[0] if "CapEff:" in out else ""
    if not caps or int(caps, 16) & (1 << 21):
        broken.append(f"confinement: the episode holds CAP_SYS_ADMIN (CapEff {caps or 'unread'}) and may remount "
                      "its read-only binds")
    if "SYSCTL-WRITABLE" in out:
        broken.append("confinement: /proc/sys is writable from the episode")
    return broken


def _probe_keyring(run: Run) -> list[str]:
    token, name = uuid.uuid4().hex, f"sweworld-probe-{uuid.uuid4().hex[:12]}"
    serial = keyring.plant(name, token)
    if serial <= 0:  # no keys on this kernel (or refused): nothing to leak
        return []
    added = f"{name}-added"
    try:
        _, out = run(f"python3 -c {shlex.quote(keyring.INSIDE)} {name} {added} 2>&1; true")
        found = keyring.find(added)
    finally:
        keyring.revoke(serial)
    keyring.revoke(found)
    broken = [f"keyring: the launcher's session key {name} was read from the episode"] if token in out else []
    if found > 0:
        broken.append("keyring: the episode added a key to the launcher's session keyring")
    return broken


_SYSCALLS = r'''
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
nr = {"x86_64": dict(clone=56, keyctl=250, bpf=321, perf_event_open=298),
      "aarch64": dict(clone=220, keyctl=219, bpf=280, perf_event_open=241)}[os.uname().machine]
def refused(r):
    return r < 0 and ctypes.get_errno() in (errno.EPERM, errno.ENOSYS)
reached = []
if not refused(libc.unshare(0x10000000)):
    reached.append("unshare(CLONE_NEWUSER)")
pid = libc.syscall(L(nr["clone"]), L(0x10000000 | 17), L(0), L(0), L(0), L(0))
if pid == 0:
    os._exit(0)
if pid > 0:
    os.waitpid(pid, 0)
if not refused(pid):
    reached.append("clone(CLONE_NEWUSER)")
if not refused(libc.syscall(L(nr["keyctl"]), L(0), L(-3), L(0))):
    reached.append("keyctl")
for name in ("bpf", "perf_event_open"):
    if not refused(libc.syscall(L(nr[name]), L(0), L(0), L(0), L(0), L(0))):
        reached.append(name)
print("SYSCALLS-REACHED " + " ".join(reached))
'''


def _probe_syscalls(run: Run) -> list[str]:
    _, out = run(f"python3 -c {shlex.quote(_SYSCALLS)} 2>&1; unshare -Ur true 2>/dev/null && echo NESTED-USERNS; true")
    reached = next((line.split()[1:] for line in out.splitlines() if line.startswith("SYSCALLS-REACHED")), [])
    if "NESTED-USERNS" in out:
        reached.append("unshare -Ur")
    return [f"system calls: the episode reached {', '.join(reached)} (the seccomp filter refuses them)"] \
        if reached else []


PROBES: dict[str, Callable[[Run], list[str]]] = {
    "network": _probe_network, "host_files": _probe_host_file, "host_processes": _probe_host_processes,
    "read_only_host": _probe_read_only_host, "limits": _probe_limits, "host_secret": _probe_host_secret,
    "cache_paths": _probe_cache_paths, "confinement": _probe_confinement, "keyring": _probe_keyring,
    "syscalls": _probe_syscalls,
}


def check_isolation(run: Run, *, skip: tuple[str, ...] = ()) -> list[str]:
    """Every broken isolation expectation, probed through ``run`` (empty: the episode is isolated)."""
    broken: list[str] = []
    for name, probe in PROBES.items():
        if name not in skip:
            broken += probe(run)
    return broken


__all__ = ["PROBES", "SECRET_VARIABLE", "Run", "check_isolation"]
