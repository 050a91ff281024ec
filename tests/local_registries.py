"""Real package registries served over HTTP on 127.0.0.1 from a test: a Go module proxy (GOPROXY's
layout: ``MODULE/@v/list``, ``VERSION.info``, ``.mod``, ``.zip``) and a cargo sparse registry
(``config.json``, index files at ``1/a``, ``2/ab``, ``3/a/abc``, ``ab/cd/abcd``, ``.crate`` tarballs),
filled from Debian's sources of real modules and crates."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import tomllib


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextmanager
def served(directory: Path) -> Iterator[str]:
    """``directory`` over HTTP on 127.0.0.1 (a free port): its base URL, no trailing slash."""
    directory.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _files(source: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(source.rglob("*")):
        if path.is_file() and ".git" not in path.parts:  # links followed, dangling ones left out
            yield path.relative_to(source).as_posix(), path


def go_module(proxy: Path, module: str, version: str, source: Path, renamed_from: str | None = None) -> None:
    """``source`` (a module's tree) published on the proxy directory ``proxy`` as ``module@version``;
    ``renamed_from``: the module path its ``go.mod`` and imports say, replaced by ``module``."""
    escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)
    where = proxy / escaped / "@v"
    where.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    gomod = f"module {module}\n"
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for rel, path in _files(source):
            data = path.read_bytes()
            if renamed_from and (rel.endswith(".go") or rel == "go.mod"):
                data = data.replace(renamed_from.encode(), module.encode())
            if rel == "go.mod":
                gomod = data.decode()
            archive.writestr(f"{module}@{version}/{rel}", data)
    (where / f"{version}.zip").write_bytes(buffer.getvalue())
    (where / f"{version}.mod").write_text(gomod)
    (where / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2024-01-01T00:00:00Z"}))
    (where / "list").write_text(version + "\n")


def index_path(name: str) -> str:
    """A crate's index file in a sparse registry (cargo's layout by the length of the name)."""
    name = name.lower()
    if len(name) <= 2:
        return f"{len(name)}/{name}"
    if len(name) == 3:
        return f"3/{name[0]}/{name}"
    return f"{name[:2]}/{name[2:4]}/{name}"


def sparse_registry(root: Path, base_url: str) -> None:
    """The registry's ``config.json`` (downloads from ``crates/NAME/NAME-VERSION.crate``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"dl": f"{base_url}/crates/{{crate}}/{{crate}}-{{version}}.crate",
                                                  "api": base_url}))


def publish_crate(root: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """A crate of no dependencies published in the sparse registry at ``root``: its ``.crate``
    (a gzipped tar of ``NAME-VERSION/...``, ``files`` holding its ``Cargo.toml``) and its index line
    (with the manifest's features: cargo reads them from the index, not the crate)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for rel, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{name}-{version}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 1_700_000_000
            archive.addfile(info, io.BytesIO(data))
    crate = buffer.getvalue()
    (root / "crates" / name).mkdir(parents=True, exist_ok=True)
    (root / "crates" / name / f"{name}-{version}.crate").write_bytes(crate)
    features = tomllib.loads(files["Cargo.toml"].decode()).get("features") or {}  # cargo resolves by the index's
    line = {"name": name, "vers": version, "deps": [], "cksum": hashlib.sha256(crate).hexdigest(),
            "features": features, "yanked": False}
    index = root / index_path(name)
    index.parent.mkdir(parents=True, exist_ok=True)
    with open(index, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
