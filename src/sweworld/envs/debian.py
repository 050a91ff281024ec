"""Debian's packages without root: what a package needs (``apt-cache depends``), fetching them
(``apt-get download``, which an ordinary user may run into a directory of theirs) and unpacking them
(``dpkg-deb -x``) into trees cached under ``$SWEWORLD_HOME/debian``.

Toolchains (Go, Rust) and the sources of dependencies (``golang-*-dev``, ``librust-*-dev``) come from
here where nothing on PATH provides them. apt answers as if nothing were installed here
(``Dir::State::status=/dev/null``): the candidates are the archive's, not this machine's. Downloads
are kept (``debs/``), so a tree unpacked once is made again without the network.

A package the machine's apt lists do not know (Go 1.21+ is in ``bookworm-backports``, 1.24 in
``trixie``, which a stock bookworm's sources leave out) is asked of a private apt state under
``apt/``: its own sources list (bookworm, -updates, -security, -backports, and trixie pinned below
them all, so that it only serves what the others lack), lists and cache, checked with the system's
Debian keyring, refreshed at most once a day by ``apt-get update`` run as whoever runs sweworld
(no root: ``Debug::NoLocking``, sweworld's own lock instead).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from functools import cache
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


ARCHIVE = os.environ.get("SWEWORLD_DEBIAN_MIRROR", "http://deb.debian.org")
#: the private state's suites: (archive path, suite); the last one pinned below the others
SUITES = (("debian", "bookworm"), ("debian", "bookworm-updates"), ("debian-security", "bookworm-security"),
          ("debian", "bookworm-backports"), ("debian", "trixie"))
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
REFRESH_S = 24 * 3600


def _apt(*args: str, cwd: Path | None = None, private: bool = False) -> subprocess.CompletedProcess:
    tool = "apt-get" if args[0] in ("download", "update") else "apt-cache"
    if shutil.which(tool) is None:
        raise EnvBuildError(f"'{tool}' is not available on this machine", hint=_HINT)
    options = _private_options() if private else ()
    return subprocess.run([tool, *APT_FRESH, *options, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C"})


def _private_options() -> tuple[str, ...]:
    base = root() / "apt"
    user = pwd.getpwuid(os.getuid()).pw_name
    return tuple(x for pair in (
        f"Dir::Etc::SourceList={base / 'sources.list'}", "Dir::Etc::SourceParts=/dev/null",
        f"Dir::Etc::Preferences={base / 'preferences'}", "Dir::Etc::PreferencesParts=/dev/null",
        f"Dir::State={base / 'state'}", f"Dir::Cache={base / 'cache'}", "Debug::NoLocking=1",
        f"APT::Sandbox::User={user}") for x in ("-o", pair))


def _private_files(base: Path) -> None:
    for sub in ("state/lists/partial", "cache/archives/partial"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    signed = f" [signed-by={KEYRING}]" if KEYRING.is_file() else ""
    (base / "sources.list").write_text("".join(f"deb{signed} {ARCHIVE}/{archive} {suite} main\n"
                                               for archive, suite in SUITES))
    (base / "preferences").write_text(f"Package: *\nPin: release n={SUITES[-1][1]}\nPin-Priority: 50\n")


def private_state() -> Path:
    """The private apt state (see the module docstring), its lists fetched when missing or a day old;
    stale lists serve when the archive cannot be reached."""
    base = root() / "apt"
    stamp = base / "state" / ".updated"
    with _locked("apt"):
        if stamp.is_file() and time.time() - stamp.stat().st_mtime < REFRESH_S:
            return base
        _private_files(base)
        got = _apt("update", private=True)
        if got.returncode == 0 and "Err:" not in got.stdout:
            stamp.touch()
        elif not stamp.is_file():
            raise EnvBuildError(f"apt-get update of sweworld's own apt state at {base} failed: "
                                f"{(got.stderr or got.stdout).strip()[-400:]}", hint=_HINT)
    return base


def _candidates(packages: list[str], *, private: bool = False) -> dict[str, str | None]:
    """Each package's candidate version (None: none), by one ``apt-cache policy``."""
    got = _apt("policy", *packages, private=private).stdout if packages else ""
    found: dict[str, str | None] = dict.fromkeys(packages)
    for block in re.split(r"^(?=\S)", got, flags=re.MULTILINE):
        name, version = block.split(":", 1)[0], re.search(r"Candidate: (\S+)", block)
        if version and version.group(1) != "(none)":
            found[name] = version.group(1)
    return found


@cache
def _in_private(package: str) -> str | None:
    private_state()
    return _candidates([package], private=True)[package]


def _private_for(packages: Iterable[str]) -> bool:
    """Whether ``packages`` are asked of the private state: the system's lists lack one of them."""
    if None in _candidates(sorted({p.split(":")[0] for p in packages})).values():
        private_state()
        return True
    return False


def _graph(packages: Iterable[str]) -> dict[str, list[list[str]]]:
    """``apt-cache depends --recurse``: each package's dependencies as groups of alternatives; a
    virtual package's group holds the real packages that provide it."""
    packages = list(packages)
    got = _apt("depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
               "--no-replaces", "--no-enhances", *packages,
               private=_private_for(packages))
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


def candidate(package: str, *, private: bool = False) -> str | None:
    """The archive's version of ``package`` (None: the archive has no such package) as the system's
    lists know it; ``private``: the private state's when they do not."""
    got = _apt("policy", package)
    found = re.search(r"Candidate: (\S+)", got.stdout)
    if found and found.group(1) != "(none)":
        return found.group(1)
    return _in_private(package) if private else None


def names(pattern: str) -> list[str]:
    """The packages of the private state whose names match ``pattern`` (a regular expression)."""
    private_state()
    got = _apt("pkgnames", private=True)
    return sorted(n for n in got.stdout.split() if re.fullmatch(pattern, n))


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
                got = _apt("download", *missing, cwd=Path(tmp), private=_private_for(missing))
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
