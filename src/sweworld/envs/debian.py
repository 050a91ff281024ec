"""Debian's packages without root: what a package needs (``apt-cache depends``), fetching them
(``apt-get download``, which an ordinary user may run into a directory of theirs) and unpacking them
(``dpkg-deb -x``) into trees cached under ``$SWEWORLD_HOME/debian``.

Toolchains (Go, Rust) and the sources of dependencies (``golang-*-dev``, ``librust-*-dev``) come from
here where nothing on PATH provides them. apt answers as if nothing were installed here
(``Dir::State::status=/dev/null``): the candidates are the archive's, not this machine's. Downloads
are kept (``debs/``), so a tree unpacked once is made again without the network.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from sweworld.core import paths
from sweworld.core.errors import EnvBuildError
from sweworld.core.paths import remove_tree

#: apt as if nothing were installed here
APT_FRESH = ("-o", "Dir::State::status=/dev/null")
#: never followed: an unpacked tree runs no maintainer scripts, and the host's libc serves it
NOT_FOLLOWED = frozenset({
    "libc6", "libc-bin", "libgcc-s1", "gcc-12-base", "debconf", "cdebconf", "dpkg", "perl", "perl-base",
    "install-info", "readline-common", "tar", "ca-certificates", "openssl",
})
_DEPENDS = re.compile(r"^\s*(\|)?(?:Pre)?Depends: (\S+)$")
_HINT = ("sweworld fetches toolchains and dependency sources from Debian's archive with apt-get "
         "(no root needed): run on a Debian or Ubuntu machine whose apt sources reach the archive, or install "
         "the toolchain yourself and put it on PATH")


def root() -> Path:
    """Where downloads (``debs/``) and unpacked trees (``trees/``) are kept."""
    return paths.subdir("debian")


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    with open(root() / f".{name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _apt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    tool = "apt-get" if args[0] == "download" else "apt-cache"
    if shutil.which(tool) is None:
        raise EnvBuildError(f"'{tool}' is not available on this machine", hint=_HINT)
    return subprocess.run([tool, *APT_FRESH, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C"})


def _graph(packages: Iterable[str]) -> dict[str, list[list[str]]]:
    """``apt-cache depends --recurse``: each package's dependencies as groups of alternatives; a
    virtual package's group holds the real packages that provide it."""
    got = _apt("depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
               "--no-replaces", "--no-enhances", *packages)
    if got.returncode != 0:
        raise EnvBuildError(f"apt-cache depends failed: {got.stderr.strip()[-400:]}", hint=_HINT)
    graph: dict[str, list[list[str]]] = {}
    current, group, last = None, None, None
    for line in got.stdout.splitlines():
        if not line.startswith(" "):
            current = line.strip()
            graph.setdefault(current, [])
            group = None
        elif current and (found := _DEPENDS.match(line)):
            if group is None:
                group = []
                graph[current].append(group)
            last = found.group(2)
            group.append(last)
            if not found.group(1):  # no "|": the group of alternatives ends here
                group = None
        elif current and line.startswith("    ") and last and last.startswith("<"):
            (graph[current][-1] if graph[current] else []).append(line.strip())  # a provider of a virtual one
    return graph


def closure(packages: Iterable[str], *, exclude: Iterable[str] = NOT_FOLLOWED) -> tuple[str, ...]:
    """``packages`` and what they need (Depends and Pre-Depends, recursively; of alternatives the
    first real one; a virtual package by its first provider), sorted; ``exclude`` not followed."""
    packages = list(packages)
    graph, skipped = _graph(packages), frozenset(exclude)
    wanted: set[str] = set()
    todo = list(packages)
    while todo:
        name = todo.pop().split(":")[0]
        if name in wanted or name in skipped:
            continue
        wanted.add(name)
        for group in graph.get(name, ()):
            real = [n for n in group if not n.startswith("<")]
            if real and not any(n.split(":")[0] in wanted for n in real):
                todo.append(real[0])
    return tuple(sorted(wanted))


def installed() -> frozenset[str]:
    """The packages installed on this machine (whose ``/usr`` every sandbox sees): a toolchain's
    closure leaves them out. Empty where there is no dpkg."""
    if shutil.which("dpkg-query") is None:
        return frozenset()
    got = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\n"], capture_output=True,
                         text=True)
    return frozenset(line.split("\t")[0] for line in got.stdout.splitlines() if line.endswith("\tii "))


def candidate(package: str) -> str | None:
    """The archive's version of ``package`` (None: the archive has no such package)."""
    got = _apt("policy", package)
    found = re.search(r"Candidate: (\S+)", got.stdout)
    return found.group(1) if found and found.group(1) != "(none)" else None


def provider(package: str) -> str | None:
    """``package`` when the archive has it, else the first real package that provides it (Debian's
    Rust crates are named by their versions and features that way: ``librust-rand-0.8-dev``)."""
    if candidate(package):
        return package
    got = _apt("showpkg", package)
    part = got.stdout.split("Reverse Provides:", 1)
    names = [line.split()[0] for line in part[1].splitlines() if line.strip()] if len(part) == 2 else []
    return names[0] if names else None


def _deb(debs: Path, package: str) -> Path | None:
    found = sorted(debs.glob(f"{package}_*.deb"))
    return found[-1] if found else None


def download(packages: Iterable[str]) -> dict[str, Path]:
    """Each package's ``.deb`` (fetched once, then kept under :func:`root`)."""
    debs = root() / "debs"
    debs.mkdir(exist_ok=True)
    packages = sorted(set(packages))
    with _locked("debs"):
        missing = [p for p in packages if _deb(debs, p) is None]
        if missing:
            with tempfile.TemporaryDirectory(dir=debs, prefix=".download-") as tmp:
                got = _apt("download", *missing, cwd=Path(tmp))
                if got.returncode != 0:
                    raise EnvBuildError(f"apt-get download {' '.join(missing)} failed: {got.stderr.strip()[-400:]}",
                                        hint=_HINT)
                for deb in Path(tmp).glob("*.deb"):
                    os.replace(deb, debs / deb.name)
    found = {p: _deb(debs, p) for p in packages}
    absent = sorted(p for p, deb in found.items() if deb is None)
    if absent:
        raise EnvBuildError(f"apt-get download left no .deb for {', '.join(absent)}", hint=_HINT)
    return found  # type: ignore[return-value]


def unpack(packages: Iterable[str], name: str) -> Path:
    """A tree (``usr/...``) holding ``packages`` unpacked, cached by their exact files under
    ``trees/NAME-KEY``; made once under a lock, published by one rename."""
    debs = download(packages)
    key = hashlib.sha256(" ".join(sorted(d.name for d in debs.values())).encode()).hexdigest()[:16]
    final = root() / "trees" / f"{name}-{key}"
    if (final / ".complete").is_file():
        return final
    final.parent.mkdir(exist_ok=True)
    with _locked(f"tree-{name}-{key}"):
        if (final / ".complete").is_file():
            return final
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=final.parent))
        try:
            for deb in debs.values():
                got = subprocess.run(["dpkg-deb", "-x", str(deb), str(staging)], capture_output=True, text=True)
                if got.returncode != 0:
                    raise EnvBuildError(f"dpkg-deb -x {deb.name} failed: {got.stderr.strip()[-400:]}",
                                        hint="remove it from " + str(deb.parent) + " so that it is fetched again")
            (staging / ".complete").write_text("\n".join(sorted(d.name for d in debs.values())) + "\n")
            remove_tree(final)  # a half-made one of a killed run
            os.replace(staging, final)
        finally:
            remove_tree(staging)
    return final
