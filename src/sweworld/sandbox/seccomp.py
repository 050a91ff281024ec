"""The episode's seccomp filter: Docker's default denials, nested user namespaces included.

bubblewrap loads it (``--seccomp FD``, with ``no_new_privs``) into the sandbox's first process, so
every process of the episode (the in-sandbox server, the shell, what the policy runs) lives under
it, on both routes (user namespace and setuid bubblewrap). It is a deny list in classic BPF, built
here without libseccomp:

- the calls Docker's default profile refuses to a container without extra capabilities: the kernel
  keyring (``keyctl``, ``add_key``, ``request_key``), ``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring``, mounting (old and new API), modules, kexec, reboot, swap, the clock,
  quotas, ``process_vm_*``, ``kcmp``, ``pidfd_getfd``, ``open_by_handle_at``, ``syslog``...;
- new namespaces: ``unshare`` and ``setns`` always, ``clone`` with a namespace flag (a nested user
  namespace would hand the episode a full capability set over new mounts: the kernel's largest
  attack surface), ``clone3`` answered ``ENOSYS`` (its flags are out of a filter's reach; the C
  library then falls back to ``clone``);
- ``personality`` only to the values Docker allows;
- the x32 ABI and foreign architectures (``int 0x80``) refused whole;
- beyond Docker: ``fallocate`` answers ``EOPNOTSUPP`` (as a file system without it does; the C
  library's ``posix_fallocate`` then writes the blocks itself): it reserves gigabytes in
  milliseconds, past any interval of the disk bound's watcher (``diskbound.py``).

One exception to the keyring's denial: ``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``, which makes
and joins a new, empty, anonymous session keyring and reaches no existing key; the server makes that
call before anything of the episode runs (``kernel.fresh_session_keyring``), as runc does, so that
an episode allowed the keyring (``SandboxConfig.allow_syscalls``) still finds none of its launcher's
keys (Kerberos ``KEYRING:`` caches, AFS tokens).

A denied call fails with ``EPERM`` (``ENOSYS`` for ``clone3`` and foreign architectures), as in a
Docker container; ``docs/rootless.md`` has what this was measured to break (nothing in SWE-bench's
test suites, pip, git or the framework seams' tools).
"""

from __future__ import annotations

import errno
import functools
import logging
import platform
import struct
from dataclasses import dataclass

from sweworld.core.errors import ConfigError

log = logging.getLogger(__name__)

# classic BPF (linux/filter.h, linux/seccomp.h)
_LD_ABS = 0x20   # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35      # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45     # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06      # BPF_RET | BPF_K
ALLOW = 0x7FFF0000
ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (little endian: an argument's low word first)
X32_BIT = 0x40000000
NAMESPACE_FLAGS = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE and their union, and the query: what Docker allows."""
KEYCTL_JOIN_SESSION_KEYRING = 1

DENIED = (
    "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module",
    "fanotify_init", "finit_module", "fsconfig", "fsmount", "fsopen", "fspick", "get_kernel_syms",
    "init_module", "io_uring_enter", "io_uring_register", "io_uring_setup", "ioperm", "iopl", "kcmp",
    "kexec_file_load", "kexec_load", "lookup_dcookie", "mount", "mount_setattr", "move_mount",
    "nfsservctl", "open_by_handle_at", "open_tree", "perf_event_open", "pidfd_getfd", "pivot_root",
    "process_vm_readv", "process_vm_writev", "query_module", "quotactl", "quotactl_fd", "reboot",
    "request_key", "setns", "settimeofday", "swapoff", "swapon", "sysfs", "_sysctl", "syslog",
    "umount2", "unshare", "uselib", "userfaultfd", "ustat", "vhangup",
)
"""Refused whole (``EPERM``)."""
CHECKED = ("clone", "clone3", "keyctl", "personality")
"""Refused by their arguments (see the module docstring)."""
UNSUPPORTED = ("fallocate",)
"""Answered ``EOPNOTSUPP``: callers fall back to writing (see the module docstring)."""

_X86_64 = {
    "acct": 163, "add_key": 248, "bpf": 321, "fallocate": 285, "clock_adjtime": 305, "clock_settime": 227, "clone": 56,
    "clone3": 435, "create_module": 174, "delete_module": 176, "fanotify_init": 300, "finit_module": 313,
    "fsconfig": 431, "fsmount": 432, "fsopen": 430, "fspick": 433, "get_kernel_syms": 177, "init_module": 175,
    "io_uring_enter": 426, "io_uring_register": 427, "io_uring_setup": 425, "ioperm": 173, "iopl": 172,
    "kcmp": 312, "kexec_file_load": 320, "kexec_load": 246, "keyctl": 250, "lookup_dcookie": 212,
    "mount": 165, "mount_setattr": 442, "move_mount": 429, "nfsservctl": 180, "open_by_handle_at": 304,
    "open_tree": 428, "perf_event_open": 298, "personality": 135, "pidfd_getfd": 438, "pivot_root": 155,
    "process_vm_readv": 310, "process_vm_writev": 311, "query_module": 178, "quotactl": 179,
    "quotactl_fd": 443, "reboot": 169, "request_key": 249, "setns": 308, "settimeofday": 164,
    "swapoff": 168, "swapon": 167, "sysfs": 139, "_sysctl": 156, "syslog": 103, "umount2": 166,
    "unshare": 272, "uselib": 134, "userfaultfd": 323, "ustat": 136, "vhangup": 153,
}
_AARCH64 = {  # the generic table (asm-generic/unistd.h): the legacy calls do not exist there
    "acct": 89, "add_key": 217, "bpf": 280, "fallocate": 47, "clock_adjtime": 266, "clock_settime": 112, "clone": 220,
    "clone3": 435, "delete_module": 106, "fanotify_init": 262, "finit_module": 273, "fsconfig": 431,
    "fsmount": 432, "fsopen": 430, "fspick": 433, "init_module": 105, "io_uring_enter": 426,
    "io_uring_register": 427, "io_uring_setup": 425, "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104,
    "keyctl": 219, "lookup_dcookie": 18, "mount": 40, "mount_setattr": 442, "move_mount": 429,
    "nfsservctl": 42, "open_by_handle_at": 265, "open_tree": 428, "perf_event_open": 241, "personality": 92,
    "pidfd_getfd": 438, "pivot_root": 41, "process_vm_readv": 270, "process_vm_writev": 271, "quotactl": 60,
    "quotactl_fd": 443, "reboot": 142, "request_key": 218, "setns": 268, "settimeofday": 170,
    "swapoff": 225, "swapon": 224, "syslog": 116, "umount2": 39, "unshare": 97, "userfaultfd": 282,
    "vhangup": 58,
}


@dataclass(frozen=True, eq=False)
class Arch:
    """A machine's audit architecture and system call numbers."""

    name: str
    audit: int
    numbers: dict[str, int]
    x32: bool = False


ARCHES = {"x86_64": Arch("x86_64", 0xC000003E, _X86_64, x32=True), "aarch64": Arch("aarch64", 0xC00000B7, _AARCH64)}


def native() -> Arch | None:
    """This machine's architecture, or None where the filter has no table for it."""
    machine = platform.machine().lower()
    return ARCHES.get({"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine))


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _ret(value: int) -> bytes:
    return _op(_RET, value)


DENY = ERRNO | errno.EPERM


def _guarded(nr: int, body: list[bytes]) -> list[bytes]:
    """``body`` (which always returns) for the call ``nr``; other calls jump past it."""
    return [_op(_JEQ, nr, 0, len(body)), *body]


def _clone_body() -> list[bytes]:
    return [_op(_LD_ABS, _ARG0), _op(_JSET, NAMESPACE_FLAGS, 0, 1), _ret(DENY), _ret(ALLOW)]


def _personality_body() -> list[bytes]:
    n = len(PERSONALITIES)
    checks = [_op(_JEQ, value, n - i, 0) for i, value in enumerate(PERSONALITIES)]
    return [_op(_LD_ABS, _ARG0), *checks, _ret(DENY), _ret(ALLOW)]


def _keyctl_body() -> list[bytes]:
    """Only ``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``: its second argument, both halves, zero."""
    return [_op(_LD_ABS, _ARG0), _op(_JEQ, KEYCTL_JOIN_SESSION_KEYRING, 0, 5),
            _op(_LD_ABS, _ARG0 + 8), _op(_JEQ, 0, 0, 3), _op(_LD_ABS, _ARG0 + 12), _op(_JEQ, 0, 0, 1),
            _ret(ALLOW), _ret(DENY)]


def known() -> tuple[str, ...]:
    """Every name ``SandboxConfig.allow_syscalls`` accepts (and ``*``)."""
    return (*DENIED, *CHECKED, *UNSUPPORTED)


def check_allowed(allow: list[str]) -> set[str]:
    """``allow`` as a set, refusing a name the filter does not know (``ConfigError`` naming it)."""
    unknown = sorted(set(allow) - {*known(), "*"})
    if unknown:
        raise ConfigError(f"allow_syscalls names {', '.join(unknown)}, which the seccomp filter does not deny",
                          hint=f"name some of: {', '.join(sorted(known()))}; or '*' for no filter")
    return set(allow)


def program(arch: Arch, allow: set[str] = frozenset()) -> bytes:
    """The filter for ``arch`` as bubblewrap reads it (an array of ``struct sock_filter``), less the
    calls in ``allow``. Allowing ``unshare`` allows new namespaces through ``clone`` too."""
    nums = arch.numbers
    ops = [_op(_LD_ABS, _ARCH), _op(_JEQ, arch.audit, 1, 0), _ret(ERRNO | errno.ENOSYS), _op(_LD_ABS, _NR)]
    if arch.x32:
        ops += [_op(_JGE, X32_BIT, 0, 1), _ret(ERRNO | errno.ENOSYS)]
    for name in DENIED:
        if name in nums and name not in allow:
            ops += _guarded(nums[name], [_ret(DENY)])
    for name in UNSUPPORTED:
        if name not in allow:
            ops += _guarded(nums[name], [_ret(ERRNO | errno.EOPNOTSUPP)])
    if "unshare" not in allow and "clone" not in allow:
        ops += _guarded(nums["clone"], _clone_body())
    if "clone3" not in allow and "unshare" not in allow:
        ops += _guarded(nums["clone3"], [_ret(ERRNO | errno.ENOSYS)])
    if "personality" not in allow:
        ops += _guarded(nums["personality"], _personality_body())
    if "keyctl" not in allow:
        ops += _guarded(nums["keyctl"], _keyctl_body())
    ops.append(_ret(ALLOW))
    return b"".join(ops)


def for_episode(allow: list[str]) -> bytes | None:
    """The filter an episode gets (None: none at all); what it lets through is logged, once per process
    and setting."""
    allowed = check_allowed(allow)
    arch = native()
    if arch is None or "*" in allowed:
        _say(None if arch is None else "*")
        return None
    if allowed:
        _say(", ".join(sorted(allowed)))
    return _program(arch, frozenset(allowed))


@functools.cache
def _program(arch: Arch, allowed: frozenset[str]) -> bytes:
    return program(arch, set(allowed))


@functools.cache
def _say(allowed: str | None) -> None:
    if allowed is None:
        log.warning("no seccomp filter on %s: no system call table for this architecture", platform.machine())
    elif allowed == "*":
        log.warning("seccomp filter OFF (allow_syscalls ['*']): episodes may create user namespaces and use the "
                    "kernel keyring")
    else:
        log.warning("seccomp: episodes allowed %s (denied by default)", allowed)
