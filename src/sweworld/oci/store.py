"""The image store, ``$SWEWORLD_HOME/images``: what was pulled, once, and what an episode stacks.

- ``blobs/sha256/<hex>``: every compressed layer, manifest and config once by digest (skopeo's shared
  blob directory), whatever images hold it;
- ``refs/<key>/``: each image's OCI layout (its ``index.json``; its blobs are in ``blobs/``);
- ``layers/<hex>/``: each layer unpacked once, by its uncompressed digest, and ``<hex>.json`` what
  was not kept of it (``unpack``);
- ``records/<key>.json``: one record per image (``ImageRecord``): its name, digest, layers bottom
  first, ``Env``, ``WorkingDir``, ``User``, sizes;
- ``trees/<digest>/<path>``: a directory of an image merged into one tree of hard links (``tree``:
  the sim backend's base tree);
- ``locks/``: one lock per image and per layer, so concurrent pulls of images sharing a layer unpack
  it once.

Disk for N images is the sum of their distinct layers (compressed and unpacked). ``remove`` forgets
an image; ``gc`` deletes the layers and blobs no record names.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sweworld.core import paths
from sweworld.core.paths import remove_tree


def root() -> Path:
    return paths.subdir("images")


def layer_dir(diff_id: str) -> Path:
    return root() / "layers" / diff_id.split(":", 1)[-1]


def blob_path(digest: str) -> Path:
    algorithm, _, hexdigest = digest.partition(":")
    return root() / "blobs" / algorithm / hexdigest


@dataclass
class ImageRecord:
    """What an episode needs of a pulled image. ``layers``: uncompressed digests, bottom first."""

    name: str
    key: str
    digest: str
    layers: list[str]
    env: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    user: str | None = None
    compressed: int = 0
    unpacked: int = 0
    entrypoint: list[str] = field(default_factory=list)

    def layer_dirs(self) -> list[Path]:
        """The overlay's lower directories, top first."""
        return [layer_dir(d) for d in reversed(self.layers)]


def record_path(key: str) -> Path:
    return root() / "records" / f"{key}.json"


def read_record(key: str) -> ImageRecord | None:
    path = record_path(key)
    if not path.is_file():
        return None
    try:
        return ImageRecord(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None  # a record of another version: pulled again


def write_record(record: ImageRecord) -> None:
    path = record_path(record.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(asdict(record), indent=1))
    os.replace(tmp, path)


@contextlib.contextmanager
def locked(kind: str, name: str, *, shared: bool = False) -> Iterator[None]:
    """A lock of this store (``kind``: image or layer), across processes. Pulls hold the ``gc`` lock
    shared and ``gc`` holds it alone, so it never deletes a layer a pull has not recorded yet."""
    path = root() / "locks" / f"{kind}-{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def list_images() -> list[ImageRecord]:
    found = [read_record(p.stem) for p in sorted((root() / "records").glob("*.json"))]
    return [r for r in found if r is not None]


def remove(key: str) -> bool:
    """Forget an image (its record and its layout); its layers stay until ``gc``."""
    with locked("image", key):
        existed = record_path(key).is_file()
        record_path(key).unlink(missing_ok=True)
        remove_tree(root() / "refs" / key)
    return existed


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*")) if path.is_dir() else 0


def _blobs_of(key: str) -> set[str]:
    """The blobs an image's layout names: its index, manifests and configs, and their layers."""
    index = root() / "refs" / key / "index.json"
    if not index.is_file():
        return set()
    names: set[str] = set()
    todo = [m["digest"] for m in json.loads(index.read_text()).get("manifests", [])]
    while todo:
        digest = todo.pop()
        names.add(digest.split(":", 1)[-1])
        path = blob_path(digest)
        if path.is_file() and path.stat().st_size < 4 << 20:
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                doc = json.loads(path.read_text())
                if isinstance(doc, dict):
                    todo += [d["digest"] for d in doc.get("manifests", []) + doc.get("layers", []) +
                             ([doc["config"]] if "config" in doc else []) if isinstance(d, dict) and "digest" in d]
    return names


def gc(*, dry_run: bool = False) -> dict[str, int]:
    """Delete what no image record names: unpacked layers, blobs, layouts. Returns counts and bytes
    (``dry_run``: what would be deleted, deleting nothing)."""
    freed = {"layers": 0, "blobs": 0, "bytes": 0}
    with locked("store", "gc"):
        records = list_images()
        keep_layers = {d.split(":", 1)[-1] for r in records for d in r.layers}
        keep_blobs = {b for r in records for b in _blobs_of(r.key)}
        for layout in (root() / "refs").glob("*") if (root() / "refs").is_dir() else []:
            if read_record(layout.name) is None:
                _delete(layout, dry_run)
        keep_trees = {r.digest.split(":", 1)[-1] for r in records}
        for trees in (root() / "trees").glob("*") if (root() / "trees").is_dir() else []:
            if trees.name not in keep_trees:
                freed["bytes"] += _size(trees)
                _delete(trees, dry_run)
        for layer in (root() / "layers").glob("*") if (root() / "layers").is_dir() else []:
            name = layer.name.removesuffix(".json")
            if name.startswith(".") or name in keep_layers:
                continue
            freed["bytes"] += _size(layer)
            freed["layers"] += layer.is_dir()
            _delete(layer, dry_run)
        for blob in (root() / "blobs").glob("*/*") if (root() / "blobs").is_dir() else []:
            if blob.name not in keep_blobs:
                freed["bytes"] += _size(blob)
                freed["blobs"] += 1
                _delete(blob, dry_run)
    return freed


def _delete(path: Path, dry_run: bool) -> None:
    if dry_run:
        return
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    else:
        path.unlink(missing_ok=True)


def find(key_or_name: str) -> ImageRecord | None:
    """The record whose key, or whose image name as given, is ``key_or_name`` (or an unambiguous key prefix)."""
    records = list_images()
    exact = [r for r in records if key_or_name in (r.key, r.name)]
    if exact:
        return exact[0]
    prefixed = [r for r in records if r.key.startswith(key_or_name)]
    return prefixed[0] if len(prefixed) == 1 else None
