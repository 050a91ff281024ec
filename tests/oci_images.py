"""Real container images made here without a daemon, and a real registry to serve them from.

- ``debian_rootfs(packages)``: a root file system unpacked from Debian's own packages
  (``apt-get download`` + ``dpkg-deb -x``, no root needed), cached under ``$SWEWORLD_HOME``: libc,
  bash and busybox's utilities by default;
- ``layer``, ``Entry``, ``whiteout``, ``opaque``, ``write_layout``: ``sweworld.oci.write``'s (an OCI
  image layout from layers written as an image builder writes them), re-exported for the tests;
- ``Registry``: Debian's ``docker-registry`` (CNCF distribution) on 127.0.0.1, with
  ``registries_conf`` marking it insecure and serving ``docker.io`` from it (a mirror), and
  ``push`` through skopeo.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from sweworld.oci.write import Entry, layer, opaque, whiteout, write_layout  # noqa: F401 (re-exported)

BASE_PACKAGES = ("libc6", "libtinfo6", "bash", "busybox-static")


def _home() -> Path:
    from sweworld.core.paths import home
    return home()


def debian_rootfs(packages: tuple[str, ...] = BASE_PACKAGES) -> Path:
    """A root file system of Debian's ``packages`` (cached; made once under a lock, so that parallel
    test workers wait for the first); skips the test where apt cannot fetch them."""
    key = hashlib.sha256(" ".join(packages).encode()).hexdigest()[:12]
    root = _home() / "test-images"
    final = root / f"rootfs-{key}"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / "bin" / "bash").exists():
            _make_rootfs(final, packages, root / "debs")
    return final


def _make_rootfs(final: Path, packages: tuple[str, ...], debs: Path) -> None:
    debs.mkdir(parents=True, exist_ok=True)
    missing = [p for p in packages if not list(debs.glob(f"{p}_*.deb"))]
    if missing:
        got = subprocess.run(["apt-get", "download", *missing], cwd=debs, capture_output=True, text=True)
        if got.returncode != 0:
            pytest.skip(f"apt-get download {' '.join(missing)} failed: {got.stderr.strip()[-300:]}")
    tmp = final.with_name(final.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for package in packages:
        deb = sorted(debs.glob(f"{package}_*.deb"))[-1]
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], check=True)
    busybox = tmp / "bin" / "busybox"
    for applet in subprocess.run([str(busybox), "--list"], capture_output=True, text=True, check=True).stdout.split():
        if not os.path.lexists(tmp / "bin" / applet):
            os.symlink("busybox", tmp / "bin" / applet)
    for folder in ("tmp", "root", "etc", "testbed", "proc", "dev"):
        (tmp / folder).mkdir(exist_ok=True)
    (tmp / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (tmp / "etc" / "group").write_text("root:x:0:\n")
    shutil.rmtree(final, ignore_errors=True)  # a half-made one of a killed run
    os.replace(tmp, final)


def _die_with_parent() -> None:
    """The registry ends with the test process, even one that is killed (``PR_SET_PDEATHSIG``)."""
    import ctypes
    import signal
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Registry:
    """CNCF distribution (Debian's ``docker-registry``) serving on 127.0.0.1 from ``root``."""

    def __init__(self, root: Path, htpasswd: Path | None = None):
        binary = shutil.which("docker-registry")
        if binary is None:
            pytest.skip("docker-registry is not installed (apt-get install docker-registry; `make test` does it as root)")
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        root.mkdir(parents=True, exist_ok=True)
        auth = (f"auth:\n  htpasswd:\n    realm: test\n    path: {htpasswd}\n" if htpasswd else "")
        (root / "config.yml").write_text(
            f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
            f"  delete:\n    enabled: true\nhttp:\n  addr: {self.address}\n{auth}")
        self.proc = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=subprocess.DEVNULL,
                                     stderr=open(root / "registry.log", "ab"),  # noqa: SIM115
                                     preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            if self.proc.poll() is not None:
                raise RuntimeError((root / "registry.log").read_text()[-2000:])
            time.sleep(0.05)
        self.conf = root / "registries.conf"
        self.conf.write_text(
            f'[[registry]]\nlocation = "{self.address}"\ninsecure = true\n\n'
            f'[[registry]]\nprefix = "docker.io"\nlocation = "docker.io"\n'
            f'[[registry.mirror]]\nlocation = "{self.address}"\ninsecure = true\n')

    def push(self, layout: Path, tag: str, name: str, *, creds: str | None = None) -> str:
        """Push ``oci:layout:tag`` as ``name`` (``repo:tag``) to this registry; returns its full name."""
        from sweworld.oci.cachedir import confined
        target = f"{self.address}/{name}"
        argv, env = confined(["skopeo", "copy", "--quiet", "--insecure-policy", "--dest-tls-verify=false",
                              *(["--dest-creds", creds] if creds else []), f"oci:{layout}:{tag}",
                              f"docker://{target}"], _home() / "images")  # its cache too stays in the store
        subprocess.run(argv, check=True, capture_output=True, text=True, env={**os.environ, **env})
        return target

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
