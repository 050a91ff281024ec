"""The in-sandbox server's two calls into the C library, with ``_ctypes`` alone (the whole ``ctypes``
package costs the server's start-up about 2 ms more; this costs about 0.5).

- ``fresh_session_keyring()``: ``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``, a new, empty,
  anonymous session keyring for the server and everything it starts, made before anything of the
  episode runs (as runc does before its container's first exec): the launcher's session keyring
  (Kerberos ``KEYRING:`` caches, AFS tokens) is not the episode's. The seccomp filter lets exactly
  this call through (``seccomp.py``).
- ``undumpable()``: ``prctl(PR_SET_DUMPABLE, 0)`` (see ``server.py``).

Standard library only: this file is copied beside ``server.py`` into the sandbox
(``isolation.SERVER_FILES``) and imports nothing of sweworld.
"""

import os

KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL = {"x86_64": 250, "aarch64": 219, "arm64": 219}
PR_SET_DUMPABLE = 4
_FUNCTIONS = {}


def _function(name):
    """The C library's ``name`` as a callable returning a C long, errno kept (None: no ``_ctypes``)."""
    if name not in _FUNCTIONS:
        try:
            import _ctypes
        except ImportError:
            return None

        class Long(_ctypes._SimpleCData):
            _type_ = "l"

        class Function(_ctypes.CFuncPtr):
            _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
            _restype_ = Long

        class Libc:
            _handle = _ctypes.dlopen(None)

        _FUNCTIONS[name] = (Function((name, Libc)), Long, _ctypes.get_errno)
    return _FUNCTIONS[name]


def _call(name, *args):
    """``(result, errno)`` of the C library's ``name(*args)`` (C longs); ``(-1, 0)`` without ``_ctypes``."""
    try:
        found = _function(name)
    except (OSError, AttributeError, TypeError):
        found = None
    if found is None:
        return -1, 0
    function, long_, get_errno = found
    result = function(*(long_(arg) for arg in args))
    return result, (get_errno() if result < 0 else 0)


def fresh_session_keyring():
    """Join a new anonymous session keyring: ``"fresh"``, or why not (the host reports it)."""
    number = KEYCTL.get(os.uname().machine)
    if number is None:
        return "unavailable: no keyctl number known for %s" % os.uname().machine
    try:
        serial, err = _call("syscall", number, KEYCTL_JOIN_SESSION_KEYRING, 0)
    except OSError as exc:
        return "unavailable: %s" % exc
    if serial > 0:
        return "fresh"
    return "unavailable: keyctl errno %d" % err if err else "unavailable: no _ctypes to call keyctl"


def undumpable():
    """``prctl(PR_SET_DUMPABLE, 0)``: True when done."""
    try:
        return _call("prctl", PR_SET_DUMPABLE, 0, 0, 0, 0)[0] == 0
    except OSError:
        return False
