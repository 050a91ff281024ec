"""``pull(name)``: an image in the store, its layers unpacked, its record written; skopeo does the
fetching (no daemon, no root), every blob once by digest in the store's shared blob directory.

A pull that stops half way is resumed by the next: blobs already in the store are not fetched again
and layers already unpacked are not unpacked again. Each failure is one ``ImageError`` naming the
image (and the instance, when given) with what to do: a name that is none, a repository or tag the
registry does not have, a refused login, a rate limit, a registry that cannot be reached or speaks
plain HTTP without being marked insecure in ``registries.conf``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
from pathlib import Path

from sweworld import cas
from sweworld.core.errors import ImageError
from sweworld.oci import cachedir, registries, store
from sweworld.oci.reference import ImageRef, parse
from sweworld.oci.unpack import unpack_layer

log = logging.getLogger(__name__)
TAG = "latest"
_MESSAGE = re.compile(r'msg="((?:[^"\\]|\\.)*)"')
TIMEOUT = 3600.0
#: what skopeo's message says -> (what failed, what to do)
CAUSES = (
    (("unauthorized", "authentication required", "denied: requested access"),
     "the registry refused the login", "log in (`skopeo login --authfile FILE REGISTRY`) and point "
     "REGISTRY_AUTH_FILE at that file, or put the credentials in ~/.docker/config.json"),
    (("toomanyrequests", "rate limit"), "the registry's rate limit was reached",
     "wait and pull again, log in for a higher limit, or name a mirror in registries.conf "
     "(CONTAINERS_REGISTRIES_CONF)"),
    (("manifest unknown", "name unknown", "not found", "no such file", "does not exist"),
     "the registry has no such repository or tag", "check the name and the tag (`skopeo list-tags docker://REPO`)"),
    (("server gave http response to https client",),
     "the registry speaks plain HTTP and is not marked insecure",
     "mark it insecure in registries.conf ([[registry]] location = \"HOST:PORT\", insecure = true) and "
     "point CONTAINERS_REGISTRIES_CONF at that file"),
    (("connection refused", "no such host", "i/o timeout", "network is unreachable", "tls handshake timeout",
      "dial tcp", "temporary failure in name resolution"),
     "the registry cannot be reached", "check the network, or name a reachable mirror in registries.conf "
     "(CONTAINERS_REGISTRIES_CONF)"),
)


def skopeo() -> str:
    found = shutil.which("skopeo")
    if found is None:
        raise ImageError("'skopeo' is not installed: images are pulled with it",
                         hint="apt-get install skopeo (`make test`/`make demo` install it when run as root)")
    return found


def _cause(stderr: str) -> tuple[str, str]:
    low = stderr.lower()
    for needles, what, hint in CAUSES:
        if any(n in low for n in needles):
            return what, hint
    return "skopeo failed", "read skopeo's message above; `skopeo inspect` the same name to see more"


def _where(ref: ImageRef | str, instance: str | None) -> str:
    name = ref.given if isinstance(ref, ImageRef) else ref
    return f"{instance}: {name}" if instance else name


def _copy(ref: ImageRef, layout: Path, instance: str | None, timeout: float) -> None:
    root = store.root()
    for folder in (root / "blobs", layout.parent):
        folder.mkdir(parents=True, exist_ok=True)
    argv = [skopeo(), *registries.global_args(root), "copy", "--quiet", *registries.auth_args(),
            "--retry-times", "2", "--dest-shared-blob-dir", str(root / "blobs"), ref.source, f"oci:{layout}:{TAG}"]
    scratch = root / "tmp"  # skopeo's big temporary files, on the store's file system
    scratch.mkdir(exist_ok=True)
    argv, env = cachedir.confined(argv, root)  # its blob-info cache too stays in the store
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **env, "TMPDIR": str(scratch)})
    except subprocess.TimeoutExpired as exc:
        raise ImageError(f"pulling took more than {timeout:.0f}s", where=_where(ref, instance),
                         hint="pull it again: what was fetched is kept") from exc
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        message = found.group(1) if (found := _MESSAGE.search(last)) else last
        what, hint = _cause(done.stderr)
        raise ImageError(f"{what}: {message}", where=_where(ref, instance), hint=hint)


def _json(digest: str, what: str, where: str) -> dict:
    path = store.blob_path(digest)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ImageError(f"the image's {what} ({digest}) is missing or unreadable in the store", where=where,
                         hint="pull it again (`sweworld env pull --refresh IMAGE`)") from exc


def _manifest(layout: Path, where: str) -> tuple[str, dict]:
    index = json.loads((layout / "index.json").read_text())
    manifests = index.get("manifests", [])
    if not manifests:
        raise ImageError("the pulled layout names no manifest", where=where, hint="pull it again")
    digest = manifests[-1]["digest"]
    doc = _json(digest, "manifest", where)
    if "manifests" in doc:  # an index: the linux/amd64 one (skopeo chose it; take it the same way)
        chosen = next((m for m in doc["manifests"] if m.get("platform", {}).get("architecture") in ("amd64", None)),
                      doc["manifests"][0])
        digest, doc = chosen["digest"], _json(chosen["digest"], "manifest", where)
    return digest, doc


def _warn_unsafe(where: str, diff_id: str, unsafe: list, dest: Path) -> None:
    """One warning per layer holding entries that were skipped or rewritten (the pull goes on)."""
    shown = "; ".join(f"{name!r} ({what})" for name, what in unsafe[:3])
    more = f"; and {len(unsafe) - 3} more" if len(unsafe) > 3 else ""
    log.warning("%s: layer %s holds %d unsafe entr%s, none written outside the layer or through a link: "
                "%s%s (all of them: %s); the rest of the image is unpacked: if it is not meant to hold such "
                "entries, rebuild it from a source you trust", where, diff_id, len(unsafe),
                "y" if len(unsafe) == 1 else "ies", shown, more, dest.with_suffix(".json"))


def _unpack(layer: dict, diff_id: str, lowers: list[Path], where: str) -> dict:
    dest = store.layer_dir(diff_id)
    with store.locked("layer", dest.name):
        fresh = not dest.is_dir()
        try:
            meta = unpack_layer(store.blob_path(layer["digest"]), dest, diff_id=diff_id, lowers=lowers[::-1])
        except ImageError as exc:
            raise ImageError(exc.message, where=where, hint=exc.hint) from exc
        if fresh:  # its files shared with every layer and environment holding the same
            cas.share(dest, f"{where}: layer {diff_id[:19]}")
    if meta.get("unsafe"):
        _warn_unsafe(where, diff_id, meta["unsafe"], dest)
    return meta


def _record(ref: ImageRef, layout: Path, where: str) -> store.ImageRecord:
    digest, manifest = _manifest(layout, where)
    config = _json(manifest["config"]["digest"], "config", where)
    diff_ids = config.get("rootfs", {}).get("diff_ids", [])
    layers = manifest.get("layers", [])
    if len(diff_ids) != len(layers):
        raise ImageError(f"the image's config names {len(diff_ids)} layers and its manifest {len(layers)}",
                         where=where, hint="the image is malformed: rebuild or re-push it")
    lowers: list[Path] = []
    unpacked = 0
    for layer, diff_id in zip(layers, diff_ids, strict=True):
        meta = _unpack(layer, diff_id, lowers, where)
        unpacked += int(meta.get("size", 0))
        lowers.append(store.layer_dir(diff_id))
    settings = config.get("config") or {}
    env = dict(item.split("=", 1) for item in settings.get("Env") or [] if "=" in item)
    return store.ImageRecord(
        name=ref.given, key=ref.key, digest=digest, layers=list(diff_ids), env=env,
        workdir=settings.get("WorkingDir") or None, user=settings.get("User") or None,
        compressed=sum(int(layer.get("size", 0)) for layer in layers), unpacked=unpacked,
        entrypoint=[*(settings.get("Entrypoint") or []), *(settings.get("Cmd") or [])])


def pull(name: str, *, instance: str | None = None, refresh: bool = False,
         timeout: float = TIMEOUT) -> store.ImageRecord:
    """The image ``name`` in the store (pulled unless already there, or ``refresh``), its record."""
    try:
        ref = parse(name)
    except ImageError as exc:
        raise ImageError(exc.message, where=_where(name, instance), hint=exc.hint) from None
    where = _where(ref, instance)
    with store.locked("store", "gc", shared=True), store.locked("image", ref.key):
        if not refresh:
            found = store.read_record(ref.key)
            if found is not None and all(d.is_dir() for d in found.layer_dirs()):
                return found
        layout = store.root() / "refs" / ref.key
        _copy(ref, layout, instance, timeout)
        record = _record(ref, layout, where)
        store.write_record(record)
        return record
