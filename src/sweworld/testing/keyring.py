"""The launcher's session keyring, from the host side: plant a key there, look for one, revoke it.

What ``check_isolation``'s keyring probe needs (``testing/isolation.py``): a key in the session
keyring of the process that opens episodes (where a cluster keeps Kerberos ``KEYRING:`` caches and
AFS tokens), and afterwards the proof that an episode neither read it nor added one beside it.

The session keyring belongs to a thread's credentials: ``join()`` gives the calling thread (and the
threads and processes it starts later) a session keyring of their own, so a test process calls it
first, from its main thread, before any episode opens; a probe planting into a process without one
would plant into a keyring only its own thread holds.
"""

from __future__ import annotations

import ctypes
import os

KEYCTL = {"x86_64": 250, "aarch64": 219, "arm64": 219}
ADD_KEY = {"x86_64": 248, "aarch64": 217, "arm64": 217}
SESSION = -3
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_REVOKE, KEYCTL_SEARCH = 0, 1, 3, 10


def _syscall(table: dict[str, int], *args: int | bytes) -> int:
    number = table.get(os.uname().machine)
    if number is None:
        return -1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(ctypes.c_long(number), *(a if isinstance(a, bytes) else ctypes.c_long(a) for a in args))


def join() -> int:
    """A new anonymous session keyring for the calling thread (its serial; <= 0 where refused)."""
    return _syscall(KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, 0)


def plant(description: str, payload: str) -> int:
    """A ``user`` key in the session keyring (its serial; <= 0 where the kernel refuses keys)."""
    data = payload.encode()
    return _syscall(ADD_KEY, b"user", description.encode(), data, len(data), SESSION)


def find(description: str) -> int:
    """The serial of the ``user`` key ``description`` in the session keyring, or <= 0."""
    return _syscall(KEYCTL, KEYCTL_SEARCH, SESSION, b"user", description.encode(), 0)


def revoke(serial: int) -> None:
    if serial > 0:
        _syscall(KEYCTL, KEYCTL_REVOKE, serial)


INSIDE = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
m = os.uname().machine
KEYCTL, ADD_KEY = {"x86_64": 250, "aarch64": 219}[m], {"x86_64": 248, "aarch64": 217}[m]
want, added = sys.argv[1].encode(), sys.argv[2].encode()
out = []
serial = libc.syscall(L(KEYCTL), L(10), L(-3), b"user", want, L(0))
if serial > 0:
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(L(KEYCTL), L(11), L(serial), buf, L(4096))
    out.append("KEY-READ:" + buf.raw[:max(n, 0)].decode(errors="replace"))
if libc.syscall(L(ADD_KEY), b"user", added, b"x", L(1), L(-3)) > 0:
    out.append("KEY-ADDED")
print("KEYRING-PROBE " + " ".join(out))
'''
"""Run in the episode as ``python3 -c INSIDE DESCRIPTION ADDED``: reads the planted key if it can,
adds ``ADDED`` to the session keyring if it can."""
