"""Go and Rust toolchains for builds and episodes: the one on PATH first (a rustup toolchain, an
official Go tarball, a distribution's packages), Debian's otherwise, unpacked without root
(``envs.debian``: Go from ``golang-1.NN-go``, Rust 1.96 from ``rustc-web`` and ``cargo-web``).

Go is chosen by the module's ``go`` line (``find("go", at_least=...)``): the ``go`` on PATH when it is
that new, else Debian's Go 1.23 (bookworm-backports), which every module up to ``go 1.23.5`` shares
(Go builds older modules as their ``go`` line says: one toolchain, one unpacked tree, fewer
environments that differ by their Go alone), else the oldest Debian Go that is new enough (trixie's
1.24). Bookworm's own 1.19 cannot read ``go 1.21.0`` lines, and Debian's Go sources of modules
built with it build with 1.23 too.

A toolchain is a host directory seen read-only at ``/sweworld/toolchains/LANG`` inside every sandbox of
its tasks (nothing of the host path shows inside); one under ``/usr`` is the host's own system, which
every sandbox sees already, and is not mounted. ``SWEWORLD_TOOLCHAIN=debian`` (or ``path``) picks
the source for every language.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.errors import EnvBuildError
from sweworld.envs import debian

MOUNT = "/sweworld/toolchains"
SOURCES = ("auto", "path", "debian")
GO_PACKAGE = re.compile(r"golang-(1\.\d+)-go")
SHARED_GO = "1.23"
"""The Go every module whose ``go`` line it meets shares (the newest of bookworm-backports)."""
RUST_PACKAGES = ("cargo-web",)
MULTIARCH_LIBS = "usr/lib/x86_64-linux-gnu"
_INSTALL = {
    "go": "install Go (https://go.dev/dl, or `apt-get install golang-go`) and put `go` on PATH",
    "rust": "install Rust (https://rustup.rs, or `apt-get install cargo`) and put `cargo` and `rustc` on PATH",
}


class TooNew(EnvBuildError):
    """The project asks for a newer toolchain than any reachable here."""


@dataclass(frozen=True)
class Toolchain:
    """``language``'s toolchain: ``root`` on the host, seen at ``mount`` inside (``root`` itself when
    it is under ``/usr``); ``bin`` the directory of its programs, relative to the root; ``env`` the
    variables it needs, paths inside the sandbox."""

    language: str
    root: Path
    bin: str
    version: str
    origin: str  # "PATH" or "debian"
    env_rel: dict[str, str] = field(default_factory=dict)
    package: str | None = None
    """Debian's package it comes from (``golang-1.23-go``), None when it is on PATH."""

    @property
    def mount(self) -> str:
        return str(self.root) if _is_system(self.root) else f"{MOUNT}/{self.language}"

    def inside(self, rel: str) -> str:
        """``rel`` (relative to the root) as a path inside the sandbox."""
        return f"{self.mount}/{rel}".rstrip("/") if rel else self.mount

    @property
    def path(self) -> str:
        """The directory to put first on PATH inside the sandbox."""
        return self.inside(self.bin)

    @property
    def env(self) -> dict[str, str]:
        return {key: self.inside(rel) for key, rel in self.env_rel.items()}

    def mounts(self) -> dict[str, Path]:
        """Host directories to show read-only in the sandbox, by their path inside."""
        return {} if _is_system(self.root) else {self.mount: self.root}

    def host_path(self, program: str) -> Path:
        return self.root / self.bin / program


def _is_system(path: Path) -> bool:
    return str(path) == "/usr" or str(path).startswith("/usr/")


def _source(source: str | None) -> str:
    chosen = source or os.environ.get("SWEWORLD_TOOLCHAIN") or "auto"
    if chosen not in SOURCES:
        raise EnvBuildError(f"SWEWORLD_TOOLCHAIN={chosen}: not one of {', '.join(SOURCES)}",
                            hint="unset it (PATH first, then Debian's packages) or pick one of them")
    return chosen


def _run(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    try:
        got = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return got.stdout.strip() if got.returncode == 0 else None


def _go_on_path(at_least: str | None = None) -> Toolchain | None:
    go = shutil.which("go")
    if go is None:
        return None
    goroot = _run([go, "env", "GOROOT"], {"GOTOOLCHAIN": "local"})
    version = _run([go, "env", "GOVERSION"], {"GOTOOLCHAIN": "local"})
    if not goroot or not version or not (Path(goroot) / "bin" / "go").is_file():
        return None
    if at_least and version_tuple(version.removeprefix("go")) < version_tuple(at_least):
        return None  # too old for the module: Debian's next
    root = Path(goroot).resolve()
    return Toolchain("go", root, "bin", version.removeprefix("go"), "PATH", {"GOROOT": ""})


def debian_go_versions() -> dict[str, str]:
    """Debian's Go toolchains reachable here (bookworm, its backports, trixie): package -> version."""
    found = {}
    for package in debian.names(GO_PACKAGE.pattern):
        if version := debian.candidate(package, private=True):
            found[package] = re.sub(r"^\d+:", "", version).split("-")[0].split("+")[0].split("~")[0]
    return found


def choose_go(available: dict[str, str], at_least: str | None) -> str:
    """The package of the Go for a ``go`` line of ``at_least`` (see the module docstring)."""
    wanted = version_tuple(at_least or "1.0")
    fits = sorted((version_tuple(v), p) for p, v in available.items() if version_tuple(v) >= wanted)
    if not fits:
        newest = max(available.values(), key=version_tuple, default="none")
        raise TooNew(f"go.mod asks for Go {at_least}, and the newest Go reachable here is {newest} (Debian's "
                            "bookworm, bookworm-backports and trixie)",
                            hint=f"put Go {at_least} or newer on PATH (https://go.dev/dl), or mine an older commit")
    shared = [fit for fit in fits if fit[0][:2] >= version_tuple(SHARED_GO)]
    return (shared or fits)[0][1]


def debian_go(package: str) -> Toolchain:
    """Debian's Go of ``package`` (``golang-1.23-go``), unpacked with its sources."""
    minor = GO_PACKAGE.fullmatch(package)
    if minor is None:
        raise EnvBuildError(f"'{package}' is not a Debian Go toolchain", hint="name one as golang-1.NN-go")
    tree = debian.unpack(debian.closure([package], exclude=debian.NOT_FOLLOWED | debian.installed()),
                         f"go-{minor.group(1)}")
    goroot = f"usr/lib/go-{minor.group(1)}"
    version = (tree / goroot / "VERSION").read_text().split()[0].removeprefix("go")
    return Toolchain("go", tree, f"{goroot}/bin", version, "debian", {"GOROOT": goroot}, package)


def _go_from_debian(at_least: str | None = None) -> Toolchain:
    return debian_go(choose_go(debian_go_versions(), at_least))


def _rust_on_path(at_least: str | None = None) -> Toolchain | None:
    cargo, rustc = shutil.which("cargo"), shutil.which("rustc")
    if cargo is None or rustc is None:
        return None
    sysroot = _run([rustc, "--print", "sysroot"])
    version = _run([rustc, "--version"])
    if not sysroot or not version or not (Path(sysroot) / "bin" / "cargo").is_file():
        return None  # a cargo that is not beside its rustc cannot be mounted as one directory
    found = re.search(r"rustc (\d+\.\d+\.\d+)", version)
    return Toolchain("rust", Path(sysroot).resolve(), "bin", found.group(1) if found else version, "PATH")


def _rust_from_debian(at_least: str | None = None) -> Toolchain:
    tree = debian.unpack(debian.closure(RUST_PACKAGES, exclude=debian.NOT_FOLLOWED | debian.installed()), "rust")
    if shutil.which("cc") is None:
        raise EnvBuildError("Rust needs a C linker (cc), and this machine has none",
                            hint="install gcc (`apt-get install gcc`) or a Rust toolchain on PATH")
    version = _run([str(tree / "usr/bin/rustc"), "--version"], {"LD_LIBRARY_PATH": str(tree / MULTIARCH_LIBS)})
    found = re.search(r"rustc (\d+\.\d+\.\d+)", version or "")
    if not found:
        raise EnvBuildError(f"Debian's rustc unpacked at {tree} does not run",
                            hint=f"remove {tree} so that it is unpacked again, or install Rust on PATH")
    return Toolchain("rust", tree, "usr/bin", found.group(1), "debian", {"LD_LIBRARY_PATH": MULTIARCH_LIBS})


_FINDERS = {"go": (_go_on_path, _go_from_debian), "rust": (_rust_on_path, _rust_from_debian)}


def find(language: str, source: str | None = None, *, at_least: str | None = None) -> Toolchain:
    """``language``'s toolchain (``go`` or ``rust``): on PATH, else Debian's (``source``, default
    ``$SWEWORLD_TOOLCHAIN`` or ``auto``, narrows it to one); Go at least ``at_least`` (a ``go`` line)."""
    if language not in _FINDERS:
        raise EnvBuildError(f"no toolchain is known for language '{language}'", hint="use go or rust")
    on_path, from_debian = _FINDERS[language]
    chosen = _source(source)
    if chosen in ("auto", "path") and (found := on_path(at_least)) is not None:
        return found
    if chosen == "path":
        newer = f" of version {at_least} or newer" if at_least else ""
        raise EnvBuildError(f"no {language} toolchain{newer} on PATH (SWEWORLD_TOOLCHAIN=path)",
                            hint=_INSTALL[language])
    try:
        return from_debian(at_least)
    except EnvBuildError as exc:
        if isinstance(exc, TooNew):
            raise
        raise EnvBuildError(f"no {language} toolchain: none on PATH, and Debian's could not be had: {exc.message}",
                            hint=_INSTALL[language]) from exc


def version_tuple(version: str) -> tuple[int, ...]:
    """``1.19.8`` -> (1, 19, 8); ``1.21rc2`` -> (1, 21)."""
    return tuple(int(p) for p in re.findall(r"\d+", version.split("-")[0].split("rc")[0].split("beta")[0])[:3])
