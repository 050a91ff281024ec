"""Environments, install layers and stand-in services as bytes: what one node ships another.

``pack(kind, key)`` makes a gzip'd tar stream of what this node holds (an environment: ``env.json``
and ``venv/``; an install layer: ``instances/<inst_key>/`` whole; a service: ``env.json`` and
``venv/``) and its sha256. ``unpack`` checks the digest, extracts into a staging directory beside
the final place, checks that the metadata names the expected key and is complete, and publishes
by one rename; the caller holds the builder's file lock of that key (``store.locked``). Any failure
removes the staging directory and raises ``ArchiveError``: nothing half-unpacked is ever published.

Kept as they are: hard links (within one archive), symlinks (absolute ones too: a venv's
interpreter link), modes (less setuid/setgid) and modification times. The install layers are
overlayfs upper directories: their whiteouts (character devices 0/0) travel as devices, and the
overlay's extended attributes that say what the layer means (``user.overlay.opaque``, ``impure``,
``redirect``, ``whiteout(s)``) travel in PAX headers. Attributes naming this node's files
(``origin``, ``uuid``, ``nlink``) are left behind; a layer with ``metacopy`` files (data kept in a
lower) is refused when packing (the other node builds it then).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
from pathlib import Path

from sweworld.core.errors import EnvBuildError
from sweworld.core.paths import remove_tree
from sweworld.envs.store import envs_root, read_meta
from sweworld.envsource import Packed

COMPRESSLEVEL = 1
"""gzip level: 1 packs a venv several times faster than 6 for a few percent more bytes."""

_XATTR = "SCHILY.xattr."
_CARRIED = {f"user.overlay.{name}" for name in ("opaque", "impure", "redirect", "whiteout", "whiteouts")}
_REFUSED = "user.overlay.metacopy"


class ArchiveError(EnvBuildError):
    """An environment could not be packed or unpacked (the node builds it instead)."""


def place(kind: str, key: str) -> tuple[Path, str, tuple[str, ...] | None]:
    """Where ``(kind, key)`` lives on this node, its metadata file, and the names packed (None: all)."""
    root = envs_root()
    if kind == "env" and "/" not in key:
        return root / key, "env.json", ("env.json", "venv")
    if kind == "service" and "/" not in key:
        return root / "services" / key, "env.json", ("env.json", "venv")
    env, _, inst = key.partition("/")
    if kind == "instance" and env and inst and "/" not in inst:
        return root / env / "instances" / inst, "meta.json", None
    raise ArchiveError(f"no such environment kind or key: {kind} {key!r}",
                       hint="kinds are env (key), service (key) and instance (env_key/inst_key)")


def _expected(kind: str, key: str) -> dict[str, str]:
    """What the metadata of ``(kind, key)`` must say."""
    if kind == "instance":
        env, _, inst = key.partition("/")
        return {"key": inst, "env": env}
    return {"key": key}


def pack(kind: str, key: str) -> Packed | None:
    """The archive of ``(kind, key)`` as this node holds it; None when it is not complete here.
    Raises ``ArchiveError`` for a layer that cannot travel (see the module docstring)."""
    final, meta_name, names = place(kind, key)
    if not read_meta(final / meta_name).get("complete"):
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=COMPRESSLEVEL, format=tarfile.PAX_FORMAT) as tar:
        for name in names or sorted(os.listdir(final)):
            if name != meta_name:
                tar.add(final / name, arcname=name, filter=lambda info: _with_xattrs(info, final))
        tar.add(final / meta_name, arcname=meta_name)  # last: a truncated stream lacks it
    data = buffer.getvalue()
    return Packed(kind, key, data, hashlib.sha256(data).hexdigest())


def _with_xattrs(info: tarfile.TarInfo, root: Path) -> tarfile.TarInfo:
    """``info`` with the overlay attributes of its file that carry meaning (see the module docstring)."""
    path = root / info.name
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:  # no xattr support here: an overlay upper could not exist either
        return info
    if _REFUSED in names:
        raise ArchiveError(f"{path}: an overlay metacopy file (its data is in a lower layer), which cannot "
                           "travel on its own", hint="nothing to do: the node that lacks this layer builds it")
    for name in sorted(set(names) & _CARRIED):
        value = os.getxattr(path, name, follow_symlinks=False)
        info.pax_headers[_XATTR + name] = value.decode("utf-8", "surrogateescape")
    return info


def _member_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """Tar's own path checks (nothing outside ``dest``), keeping the member's mode less setuid/setgid
    (tarfile's ``tar`` filter would also drop group and other write bits)."""
    checked = tarfile.tar_filter(member, dest)
    return checked.replace(mode=member.mode & 0o1777, deep=False) if member.mode is not None else checked


def _inside(dest: str, name: str) -> bool:
    target = os.path.realpath(os.path.join(dest, name))
    return target == os.path.realpath(dest) or target.startswith(os.path.realpath(dest) + os.sep)


def _extract_checked(tar: tarfile.TarFile, members: list[tarfile.TarInfo], dest: str) -> None:
    """What ``extractall(filter=_member_filter)`` does, for interpreters without extraction filters
    (CPython 3.11 before 3.11.4, as Debian 12's 3.11.2): no member lands outside ``dest``, through
    ``..``, an absolute path or a link extracted before it; a hard link's target is inside ``dest``;
    setuid and setgid bits are dropped. Symbolic links may point anywhere, as tarfile's ``tar``
    filter allows (a virtualenv's ``bin/python`` points at its interpreter)."""
    for member in members:
        name = member.name
        if os.path.isabs(name) or not _inside(dest, name):
            raise tarfile.TarError(f"{name!r} would be extracted outside the destination")
        if member.islnk() and (os.path.isabs(member.linkname) or not _inside(dest, member.linkname)):
            raise tarfile.TarError(f"{name!r} links outside the destination ({member.linkname!r})")
        member.mode &= 0o1777
        tar.extract(member, dest, numeric_owner=True)


def _extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], dest: str) -> None:
    if hasattr(tarfile, "tar_filter"):
        tar.extractall(dest, filter=_member_filter, numeric_owner=True)
    else:
        _extract_checked(tar, members, dest)


def unpack(packed: Packed, kind: str, key: str) -> Path:
    """Publish ``packed`` as this node's ``(kind, key)``; the caller holds ``store.locked`` of that key.
    Returns the final directory; raises ``ArchiveError`` (and leaves nothing behind) on any failure."""
    final, meta_name, _ = place(kind, key)
    where = f"{kind} {key}" + (f" from node {packed.node}" if packed.node else "")
    if (packed.kind, packed.key) != (kind, key):
        raise ArchiveError(f"received {packed.kind} {packed.key!r} instead", where=where,
                           hint="a bug in the environment source: report it")
    if hashlib.sha256(packed.data).hexdigest() != packed.digest:
        raise ArchiveError("the archive's sha256 differs from the one computed when packing (damaged in "
                           "transit)", where=where, hint="nothing to do: this node builds it instead")
    staging, started = final.parent / f".{final.name}.fetching", time.monotonic()
    remove_tree(staging)
    try:
        staging.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(packed.data), mode="r:gz") as tar:
            members = tar.getmembers()
            _extract(tar, members, str(staging))
        _restore_xattrs(staging, members)
        _check_meta(staging / meta_name, kind, key, where)
        meta = read_meta(staging / meta_name)
        meta["fetched"] = {"from": packed.node, "bytes": len(packed.data), "sha256": packed.digest,
                           "unpack_seconds": round(time.monotonic() - started, 3)}
        (staging / meta_name).write_text(json.dumps(meta, indent=2))
        remove_tree(final)
        os.replace(staging, final)
    except (OSError, tarfile.TarError, EOFError, ValueError) as exc:
        remove_tree(staging)
        raise ArchiveError(f"unpacking failed: {type(exc).__name__}: {exc}", where=where,
                           hint="nothing to do: this node builds it instead") from exc
    except BaseException:
        remove_tree(staging)
        raise
    return final


def _restore_xattrs(root: Path, members: list[tarfile.TarInfo]) -> None:
    for member in members:
        for header, value in member.pax_headers.items():
            if header.startswith(_XATTR) and header[len(_XATTR):] in _CARRIED:
                os.setxattr(root / member.name, header[len(_XATTR):], value.encode("utf-8", "surrogateescape"),
                            follow_symlinks=False)


def _check_meta(path: Path, kind: str, key: str, where: str) -> None:
    """The unpacked metadata is complete, names ``(kind, key)``, and (an environment) its interpreter
    exists here, at the path its venv links to."""
    meta = read_meta(path)
    expected = _expected(kind, key)
    problems = [] if meta.get("complete") else ["is not complete"]
    if any(meta.get(name) != value for name, value in expected.items()):
        problems.append(f"names {({name: meta.get(name) for name in expected})}, not {expected}")
    if problems:
        raise ArchiveError(f"the unpacked {path.name} {' and '.join(problems)}", where=where,
                           hint="nothing to do: this node builds it instead")
    interpreter = meta.get("interpreter")
    if interpreter and not Path(interpreter).exists():
        raise ArchiveError(f"its interpreter {interpreter} does not exist on this node (the venv links to it)",
                           where=where, hint="install the same Python at the same path on every node, "
                           "or let this node build its own environment (it does so now)")
