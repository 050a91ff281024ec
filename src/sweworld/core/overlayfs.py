"""overlayfs's on-disk format as an unprivileged overlay (``userxattr``) reads it, for code that reads
layers without mounting them: an image's layers (``oci``), an episode's upper layers and snapshots
(``sandbox``).

- a whiteout (what a layer deleted) is a 0/0 character device, or, where ``mknod`` is refused, an
  empty regular file carrying ``user.overlay.whiteout``;
- an opaque directory (one that hides the lower layers' copy of itself) carries
  ``user.overlay.opaque=y`` (``x`` only says the directory holds attribute whiteouts).
"""

from __future__ import annotations

import os
import stat

OPAQUE = "user.overlay.opaque"
WHITEOUT = "user.overlay.whiteout"


def is_whiteout(path: str | os.PathLike, st: os.stat_result) -> bool:
    """Whether the entry at ``path`` (``st``: its ``lstat``) is a whiteout, of either kind."""
    if stat.S_ISCHR(st.st_mode):
        return st.st_rdev == 0
    if not stat.S_ISREG(st.st_mode) or st.st_size:
        return False
    try:
        os.getxattr(path, WHITEOUT, follow_symlinks=False)
        return True
    except OSError:
        return False


def is_opaque(path: str | os.PathLike) -> bool:
    """Whether the directory at ``path`` hides the lower layers' copy of itself."""
    try:
        return os.getxattr(path, OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False
