"""skopeo's blob-info cache kept out of the user's and the system's directories: a pull writes nothing
outside ``$SWEWORLD_HOME``, failed pulls included.

containers/image (skopeo's library) records digests in a blob-info cache on every copy. Where depends
only on who runs it (skopeo has no flag for it):

- an ordinary user: ``$XDG_DATA_HOME/containers/cache``, else ``~/.local/share/containers/cache``.
  skopeo is given ``XDG_DATA_HOME`` under the store, so the cache lives there (and is reused);
- root: ``/var/lib/containers/cache``, fixed. skopeo runs in a private mount namespace (``unshare
  --mount``) where the nearest existing directory on the way to it (``/var/lib`` on most machines)
  is read-only; the store, if it lies below, is writable again. containers/image then keeps the
  cache in memory for that one process, as it does whenever its directory cannot be made. Where root
  may not make a mount namespace (no ``CAP_SYS_ADMIN``), one warning says so and skopeo runs as it is.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

SYSTEM_CACHE = Path("/var/lib/containers/cache")
"""containers/image's cache directory for euid 0 (``blobinfocache.blobInfoCacheDir``)."""

# $1: the directory made read-only; then the directories made writable again, up to "--"; then skopeo
_CONFINE = (
    'ro=$1; shift; mount --rbind "$ro" "$ro"; mount -o remount,bind,ro "$ro"; '
    'while [ "$1" != -- ]; do mount --bind "$1" "$1"; mount -o remount,bind,rw "$1"; shift; done; '
    'shift; exec "$@"'
)


def data_home(store: Path) -> Path:
    """``XDG_DATA_HOME`` as skopeo sees it: the blob-info cache of an ordinary user goes below it."""
    return store / "xdg-data"


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


@functools.cache
def _mount_namespace() -> list[str] | None:
    """``unshare`` and ``sh`` when a private mount namespace can be made here, else None (said once)."""
    unshare, sh = shutil.which("unshare"), shutil.which("sh")
    if unshare and sh:
        probe = subprocess.run([unshare, "--mount", "--propagation", "private", "true"], capture_output=True,
                               stdin=subprocess.DEVNULL)
        if probe.returncode == 0:
            return [unshare, "--mount", "--propagation", "private", sh, "-ec", _CONFINE, "sh"]
    log.warning("skopeo may write its blob-info cache to %s: as root, sweworld keeps it out with a private "
                "mount namespace, which this process may not make (`unshare --mount` needs CAP_SYS_ADMIN); "
                "pull as an ordinary user, or grant that capability, to keep pulls inside $SWEWORLD_HOME",
                SYSTEM_CACHE)
    return None


def confined(argv: list[str], store: Path) -> tuple[list[str], dict[str, str]]:
    """``argv`` (a skopeo command writing only below ``store``) and the variables to add to its
    environment, such that its blob-info cache stays out of every directory but the store."""
    env = {"XDG_DATA_HOME": str(data_home(store))}
    if os.geteuid() != 0:
        return argv, env
    wrapper = _mount_namespace()
    if wrapper is None:
        return argv, env
    closed = _nearest_existing(SYSTEM_CACHE)
    store = store.resolve()
    writable = [str(store)] if store.is_relative_to(closed.resolve()) else []
    return [*wrapper, str(closed), *writable, "--", *argv], env
