"""The sandbox's ``/etc``: a snapshot of an allowlist of host entries, mounted with one bind.

Binding two dozen host files one by one costs bwrap ~10 ms per sandbox; a snapshot directory
(rebuilt when any source entry changes) costs one bind. Secrets are never copied: only the
allowlisted names, and never ``ssl/private``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from sweworld.core import paths

ETC_ENTRIES = (
    "passwd", "group", "hosts", "hostname", "resolv.conf", "nsswitch.conf", "ssl", "ca-certificates",
    "ca-certificates.conf", "localtime", "timezone", "alternatives", "ld.so.cache", "ld.so.conf",
    "ld.so.conf.d", "mime.types", "protocols", "services", "os-release", "debian_version", "pip.conf",
    "xdg", "gai.conf", "host.conf", "magic", "inputrc", "profile",
)
SKIP = {"private"}
HOSTNAME = "sandbox"
"""The sandbox's host name (its own UTS namespace); ``hosts`` maps it to the loopback address, as a
container's ``/etc/hosts`` maps its own, so that ``gethostbyname(gethostname())`` resolves (dask's
and modin's workers, ray, MPI and many test suites ask it)."""
#: ``/etc/profile.d/sweworld.sh``: a login shell (``bash --login``, as inspect's ``bash()`` tool runs
#: commands) rebuilds ``PATH`` in ``/etc/profile``; this puts the episode's virtualenv first again.
PROFILE = """# sweworld: the episode's environment stays first on PATH in login shells
if [ -d /sweworld/venv/bin ]; then
  case ":$PATH:" in *:/sweworld/venv/bin:*) ;; *) PATH="/sweworld/venv/bin:$PATH" ;; esac
  VIRTUAL_ENV=/sweworld/venv
  export PATH VIRTUAL_ENV
fi
"""


def _fingerprint() -> str:
    digest = hashlib.sha256((PROFILE + HOSTNAME).encode())
    for name in ETC_ENTRIES:
        path = Path("/etc", name)
        try:
            st = path.lstat()
        except OSError:
            continue
        digest.update(f"{name}:{st.st_mtime_ns}:{st.st_size}:{st.st_ino};".encode())
    return digest.hexdigest()[:16]


def _copy(src: Path, dest: Path) -> None:
    if src.is_symlink():
        os.symlink(os.readlink(src), dest)
    elif src.is_dir():
        dest.mkdir()
        for child in sorted(src.iterdir()):
            if child.name not in SKIP:
                _copy(child, dest / child.name)
    elif src.is_file():
        try:
            shutil.copy2(src, dest)
        except PermissionError:
            pass


def _own_name(staging: Path) -> None:
    """``hostname`` is the sandbox's; ``hosts`` (the host's entries) also names it."""
    hosts = staging / "hosts"
    try:
        text = hosts.read_text(encoding="utf-8", errors="replace") if hosts.exists() else "127.0.0.1 localhost\n"
    except OSError:
        text = "127.0.0.1 localhost\n"
    for path in (hosts, staging / "hostname"):
        if path.is_symlink() or path.exists():
            path.unlink()
    hosts.write_text(text.rstrip("\n") + f"\n127.0.0.1 {HOSTNAME}\n")
    (staging / "hostname").write_text(HOSTNAME + "\n")


@functools.lru_cache(maxsize=4)
def _snapshot(fingerprint: str) -> Path:
    final = paths.subdir("sandbox-etc") / fingerprint
    if final.exists():
        return final
    # unique per call: threads of one process (parallel first builds) must not share a staging dir
    staging = Path(tempfile.mkdtemp(prefix=f".{fingerprint}.", dir=final.parent))
    staging.chmod(0o755)
    for name in ETC_ENTRIES:
        src = Path("/etc", name)
        if src.exists() or src.is_symlink():
            _copy(src, staging / name)
    _own_name(staging)
    (staging / "profile.d").mkdir(exist_ok=True)
    (staging / "profile.d" / "sweworld.sh").write_text(PROFILE)
    try:
        os.rename(staging, final)
    except OSError:  # another process won the race
        shutil.rmtree(staging, ignore_errors=True)
    return final


def etc_snapshot() -> Path:
    """The current snapshot directory (built on first use, rebuilt when /etc changes)."""
    return _snapshot(_fingerprint())
