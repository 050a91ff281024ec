"""One directory of an image as a plain tree, read without running anything: the sim backend's base
tree (``/testbed``) and what an SWR evaluation reads in place.

An image's layers are overlay lower directories (``unpack``): a later layer's whiteouts (a character
device 0/0, or a file with ``user.overlay.whiteout``) hide a lower entry, and an opaque directory
(``user.overlay.opaque=y``) hides the lower directory's whole content. ``tree(record, "/testbed")``
merges the layers' copies of that directory, bottom first, into
``$SWEWORLD_HOME/images/trees/<image digest>/<path>``: files are hard links to the layers' own
(nothing is copied on one file system), links are links, whiteouts and opaque directories are
applied. The directory is looked up in each layer with ``lstat`` only: a layer where it, or a parent of
it, is a link, a file or a whiteout (or where an opaque parent hides it) replaces what the layers
below gave, and no link of the image is ever followed on this machine. It is made once per image
under its lock, into a temporary directory renamed into place, and ``store.gc`` removes it with its
image.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from sweworld.core.errors import ImageError
from sweworld.core.overlayfs import is_opaque, is_whiteout
from sweworld.core.paths import remove_tree
from sweworld.oci import store


def tree_dir(record: store.ImageRecord, path: str) -> Path:
    """Where ``tree`` keeps ``path`` of ``record``'s image."""
    slug = path.strip("/").replace("/", "__") or "_root"
    return store.root() / "trees" / record.digest.split(":", 1)[-1] / slug


def _drop(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            path.unlink()


def _merge(source: str, dest: Path) -> None:
    """Lay the layer directory ``source`` over ``dest`` as an overlay would show it."""
    if is_opaque(source):
        for child in list(dest.iterdir()):
            _drop(child)
    with os.scandir(source) as entries:
        for entry in entries:
            target = dest / entry.name
            if is_whiteout(entry.path, entry.stat(follow_symlinks=False)):
                _drop(target)
            elif entry.is_dir(follow_symlinks=False):
                if target.is_symlink() or (target.exists() and not target.is_dir()):
                    _drop(target)
                target.mkdir(exist_ok=True)
                shutil.copystat(entry.path, target, follow_symlinks=False)
                os.chmod(target, os.stat(target).st_mode | 0o700)
                _merge(entry.path, target)
            else:
                _drop(target)
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), target)
                    continue
                try:
                    os.link(entry.path, target, follow_symlinks=False)
                except OSError:  # another file system, or links refused: a copy
                    shutil.copy2(entry.path, target, follow_symlinks=False)


def _shown(layer: Path, rel: str) -> str | None:
    """How ``layer`` shows ``rel``: 'dir' (a real directory, no link on the way), 'hidden' (it or a
    parent is a file, a link or a whiteout, or an opaque parent hides it), None (the layer says nothing)."""
    here = layer
    for part in rel.split("/") if rel else []:
        parent, here = here, here / part
        try:
            mode = here.lstat().st_mode
        except FileNotFoundError:
            return "hidden" if is_opaque(parent) else None
        if not stat.S_ISDIR(mode):
            return "hidden"
    return "dir"


def tree(record: store.ImageRecord, path: str = "/testbed") -> Path:
    """``path`` of ``record``'s image as one directory (made once); ``ImageError`` when the image has
    no such directory."""
    final = tree_dir(record, path)
    if final.is_dir():
        return final
    rel = path.strip("/")
    with store.locked("image", record.key):
        if final.is_dir():
            return final
        tmp = final.with_name(f".{final.name}.tmp{os.getpid()}")
        _drop(tmp)
        tmp.mkdir(parents=True)
        found = False
        for layer in reversed(record.layer_dirs()):  # bottom first
            shown = _shown(layer, rel)
            if shown == "hidden":  # a later layer replaced the directory (or a parent of it)
                found = False
                for child in list(tmp.iterdir()):
                    _drop(child)
            elif shown == "dir":
                found = True
                _merge(str(layer / rel if rel else layer), tmp)
        if not found:
            _drop(tmp)
            raise ImageError(f"the image {record.name} has no directory {path}", where=record.name,
                             hint="name the directory of the repository in the image (the row's workdir)")
        os.replace(tmp, final)
    return final
