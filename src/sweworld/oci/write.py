"""OCI image layouts written here, without a daemon and without root: ``Layout``.

A layout (``oci-layout``, ``index.json``, ``blobs/sha256/``) holds any number of images, each a tag
in ``index.json`` (``org.opencontainers.image.ref.name``); a layer is one gzip-compressed tar blob
stored once by digest, so images that share a layer (a base file system, an environment) share
its blob. ``skopeo copy oci:DIR:TAG docker://REGISTRY/NAME`` publishes one; ``oci:DIR:TAG`` is
also a name ``oci.pull`` (and so ``--env-source image``) takes as it is.

- ``Layout.add_tree(parts)``: one layer streamed from directories on disk (``(directory, path in
  the image)``; the tar is never held in memory), root-owned, modes, times and hard links kept, and
  overlay whiteouts (``core.overlayfs``: a character device 0/0 or a ``user.overlay.whiteout``
  file) and opaque directories written as OCI's ``.wh.NAME`` and ``.wh..wh..opq``: an overlay
  upper directory becomes a layer as it is;
- ``layer(directory, entries)`` and ``Layout.add_layer(bytes)``: small layers built in memory from
  ``Entry`` items (files, links, whiteouts, devices), as image builders write them;
- ``Layout.add_image(tag, layers, config)``: the config (``Env``, ``WorkingDir``, ...) and manifest;
- ``write_layout(dir, tag, layers, config)``: all of it for in-memory layers.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.overlayfs import is_opaque, is_whiteout

LAYER_MEDIA = "application/vnd.oci.image.layer.v1.tar+gzip"
MANIFEST_MEDIA = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA = "application/vnd.oci.image.config.v1+json"
REF_NAME = "org.opencontainers.image.ref.name"


@dataclass(frozen=True)
class Blob:
    """A layer in a layout: its compressed blob (``digest``, ``size``) and its tar's ``diff_id``."""

    digest: str
    size: int
    diff_id: str


@dataclass
class Entry:
    """One tar entry: ``kind`` file, dir, symlink, hardlink, fifo, chardev; ``data`` a file's bytes,
    ``link`` a link's target; ``mode`` with setuid bits where wanted."""

    name: str
    kind: str = "file"
    data: bytes = b""
    link: str = ""
    mode: int = 0o644


_KINDS = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
          "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE, "chardev": tarfile.CHRTYPE}


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _add_entry(tar: tarfile.TarFile, entry: Entry) -> None:
    info = tarfile.TarInfo(entry.name)
    info.mode, info.mtime, info.type, info.linkname = entry.mode, 1_700_000_000, _KINDS[entry.kind], entry.link
    if entry.kind == "chardev":
        info.devmajor, info.devminor = 1, 3
    info.size = len(entry.data) if entry.kind == "file" else 0
    tar.addfile(_root_owned(info), io.BytesIO(entry.data) if entry.kind == "file" else None)


def layer(directory: Path | None = None, entries: Iterable[Entry] = ()) -> bytes:
    """An uncompressed layer tar in memory: ``directory``'s tree (root-owned), then ``entries`` in order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if directory is not None:
            tar.add(directory, arcname=".", filter=_root_owned)
        for entry in entries:
            _add_entry(tar, entry)
    return out.getvalue()


def whiteout(path: str) -> Entry:
    folder, name = os.path.split(path)
    return Entry(os.path.join(folder, ".wh." + name))


def opaque(folder: str) -> Entry:
    return Entry(os.path.join(folder, ".wh..wh..opq"))


class _Hashing(io.RawIOBase):
    """A write-only stream that hashes and counts what passes through to ``sink``."""

    def __init__(self, sink) -> None:
        self.sink, self.sha, self.size = sink, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.sha.update(data)
        self.size += len(data)
        self.sink.write(data)
        return len(data)


def _add_tree(tar: tarfile.TarFile, directory: Path, prefix: str, skip: frozenset[str]) -> None:
    """``directory`` at ``prefix`` (no leading slash), overlay whiteouts and opaque directories as OCI's."""
    parts = [p for p in prefix.strip("/").split("/") if p]
    for i in range(1, len(parts)):  # the parents of the prefix, so that it unpacks anywhere
        _add_entry(tar, Entry("/".join(parts[:i]), kind="dir", mode=0o755))
    for folder, dirs, files in os.walk(directory):
        dirs.sort()
        rel = Path(folder).relative_to(directory)
        here = "/".join([*parts, *rel.parts])
        info = _root_owned(tar.gettarinfo(folder, arcname=here or "."))
        tar.addfile(info)
        if rel.parts and is_opaque(folder):
            _add_entry(tar, opaque(here))
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            arcname = f"{here}/{name}" if here else name
            if not rel.parts and name in skip:
                continue
            if is_whiteout(path, st):
                _add_entry(tar, whiteout(arcname))
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                tar.add(path, arcname=arcname, recursive=False, filter=_root_owned)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]


class Layout:
    """An OCI image layout at ``path`` (made when missing), images added one tag at a time."""

    def __init__(self, path: Path):
        self.path = path
        self.blobs = path / "blobs" / "sha256"
        self.blobs.mkdir(parents=True, exist_ok=True)
        (path / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))

    def _blob(self, data: bytes) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        target = self.blobs / digest
        if not target.is_file():
            target.write_bytes(data)
        return {"digest": f"sha256:{digest}", "size": len(data)}

    def add_layer(self, tar: bytes) -> Blob:
        """A layer from an uncompressed tar in memory."""
        desc = self._blob(gzip.compress(tar, mtime=0))
        return Blob(desc["digest"], desc["size"], f"sha256:{hashlib.sha256(tar).hexdigest()}")

    def add_tree(self, parts: Iterable[tuple[Path, str]], *, skip: Iterable[str] = ()) -> Blob:
        """One layer of directories (``(directory, path in the image)``, later ones over earlier
        ones), streamed to its blob; ``skip``: names left out at the top of each directory."""
        with tempfile.NamedTemporaryFile(dir=self.blobs, prefix=".layer-", delete=False) as handle:
            compressed = _Hashing(handle)
            with gzip.GzipFile(fileobj=compressed, mode="wb", mtime=0) as zipped:
                plain = _Hashing(zipped)
                with tarfile.open(fileobj=plain, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                    for directory, prefix in parts:
                        _add_tree(tar, directory, prefix, frozenset(skip))
        digest = compressed.sha.hexdigest()
        os.replace(handle.name, self.blobs / digest)
        return Blob(f"sha256:{digest}", compressed.size, f"sha256:{plain.sha.hexdigest()}")

    def add_image(self, tag: str, layers: list[Blob], config: dict | None = None) -> str:
        """The image of ``layers`` (bottom first) tagged ``tag`` (replacing an image of that tag);
        returns its manifest's digest."""
        image_config = {"architecture": "amd64", "os": "linux", "config": config or {},
                        "rootfs": {"type": "layers", "diff_ids": [b.diff_id for b in layers]}}
        config_desc = self._blob(json.dumps(image_config).encode())
        manifest = {"schemaVersion": 2, "mediaType": MANIFEST_MEDIA,
                    "config": {"mediaType": CONFIG_MEDIA, **config_desc},
                    "layers": [{"mediaType": LAYER_MEDIA, "digest": b.digest, "size": b.size} for b in layers]}
        manifest_desc = self._blob(json.dumps(manifest).encode())
        index_path = self.path / "index.json"
        index = json.loads(index_path.read_text()) if index_path.is_file() else {"schemaVersion": 2, "manifests": []}
        index["manifests"] = [m for m in index["manifests"] if m.get("annotations", {}).get(REF_NAME) != tag]
        index["manifests"].append({"mediaType": MANIFEST_MEDIA, **manifest_desc, "annotations": {REF_NAME: tag}})
        staging = index_path.with_name(".index.json.tmp")
        staging.write_text(json.dumps(index))
        os.replace(staging, index_path)
        return manifest_desc["digest"]


def write_layout(layout: Path, tag: str, layers: list[bytes], config: dict | None = None) -> Path:
    """An OCI image layout at ``layout`` with one image tagged ``tag`` (in-memory layers, bottom first)."""
    out = Layout(layout)
    out.add_image(tag, [out.add_layer(tar) for tar in layers], config)
    return layout
