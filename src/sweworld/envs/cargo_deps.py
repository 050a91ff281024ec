"""A Rust project's crates, offline, from Debian's ``librust-*-dev`` packages.

Debian installs each crate's source at ``/usr/share/cargo/registry/NAME-VERSION`` with a
``.cargo-checksum.json``: a cargo *directory source*. The crates a project's manifests name
(dependencies, dev- and build-dependencies, of every workspace member and target) are mapped to
their packages (``serde_json`` -> ``librust-serde-json-dev``; a feature asked for ->
``librust-serde+derive-dev`` where Debian splits it out), their dependencies come along with them
(apt's closure), and cargo itself then says what it still misses (``cargo generate-lockfile
--offline`` over the directory), until it resolves or names a crate Debian does not ship.

:func:`crates_for` returns the unpacked registry; :func:`cargo_config` the ``config.toml`` that
replaces crates.io with it. Builds then run ``cargo test --offline``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import EnvBuildError
from sweworld.envs import debian
from sweworld.envs.toolchains import Toolchain

REGISTRY_IN_TREE = "usr/share/cargo/registry"
TABLES = ("dependencies", "dev-dependencies", "build-dependencies")
MAX_ROUNDS = 12
_MISSING = re.compile(r"no matching package (?:named|found)[^`]*`([A-Za-z0-9_\-]+)`")
_UNMATCHED = re.compile(r"failed to select a version for the requirement `([A-Za-z0-9_\-]+) = \"([^\"]+)\"`")
_HINT = ("Debian's librust-*-dev packages are the only crates reachable here (crates.io is not): vendor the "
         "crate into the repository (`cargo vendor`), or mine a commit whose Cargo.toml asks for what Debian ships")


@dataclass(frozen=True)
class Wanted:
    """A crate a manifest names: its registry ``name``, the version ``req`` and ``features``, and
    where (``file``)."""

    name: str
    req: str
    features: tuple[str, ...]
    file: str


def _toml(path: Path) -> dict:
    import tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except tomllib.TOMLDecodeError as exc:
        raise EnvBuildError(f"{path.name} is not valid TOML: {exc}", where=str(path),
                            hint="fix the manifest at this commit, or mine another one") from exc


def _tables(manifest: dict) -> list[dict]:
    found = [manifest.get(t) or {} for t in TABLES]
    for target in (manifest.get("target") or {}).values():
        found += [(target or {}).get(t) or {} for t in TABLES]
    workspace = manifest.get("workspace") or {}
    found.append(workspace.get("dependencies") or {})
    return found


def _member_manifests(tree: Path, manifest: dict) -> list[Path]:
    members = ((manifest.get("workspace") or {}).get("members")) or []
    found = []
    for pattern in members:
        if pattern.strip("/") in ("", "."):
            continue  # the root itself, read already (and an empty glob pattern is an error)
        found += [p / "Cargo.toml" for p in sorted(tree.glob(pattern)) if (p / "Cargo.toml").is_file()]
    return found


def wanted(tree: Path, *, git: bool = False) -> list[Wanted]:
    """Every registry crate the manifests of ``tree`` name (path and workspace-inherited entries
    left out: they are the project's own, or named once in the workspace's table); one from git is an
    error unless ``git`` (a registry that answers: cargo fetches git sources with the network too)."""
    root = tree / "Cargo.toml"
    if not root.is_file():
        raise EnvBuildError("no Cargo.toml at the root of the tree", where=str(tree),
                            hint="a Rust task needs its Cargo.toml (or its workspace's) at the repository root")
    manifests, seen, found = [root], set(), []
    manifests += _member_manifests(tree, _toml(root))
    for path in manifests:
        if path in seen:
            continue
        seen.add(path)
        rel = path.relative_to(tree).as_posix()
        for table in _tables(_toml(path)):
            for key, spec in table.items():
                spec = {"version": spec} if isinstance(spec, str) else dict(spec or {})
                if spec.get("path") or spec.get("workspace"):
                    continue
                if spec.get("git") and not git:
                    raise EnvBuildError(f"{rel}: dependency '{key}' comes from git ({spec['git']}), which is not "
                                        "reachable offline", where=rel, hint=_HINT)
                found.append(Wanted(spec.get("package") or key, str(spec.get("version") or "*"),
                                    tuple(spec.get("features") or ()), rel))
    return found


def package_name(crate: str, feature: str | None = None) -> str:
    """Debian's package of ``crate`` (and of one of its features)."""
    name = crate.lower().replace("_", "-")
    return f"librust-{name}+{feature.lower().replace('_', '-')}-dev" if feature else f"librust-{name}-dev"


def _packages(crates: list[Wanted]) -> tuple[set[str], list[Wanted]]:
    """(Debian packages of ``crates`` and of the features they ask for, the crates with none)."""
    packages, unknown = set(), []
    for crate in crates:
        found = debian.provider(package_name(crate.name))
        if found is None:
            unknown.append(crate)
            continue
        packages.add(found)
        for feature in crate.features:
            if (extra := debian.provider(package_name(crate.name, feature))) is not None:
                packages.add(extra)
    return packages, unknown


def _unknown_error(unknown: list[Wanted]) -> EnvBuildError:
    names = ", ".join(f"{c.name} {c.req} ({c.file})" for c in unknown)
    return EnvBuildError(f"Debian ships no package of crate(s) {names}", where=unknown[0].file,
                         hint=f"wanted {', '.join(package_name(c.name) for c in unknown)}; " + _HINT)


def unpacked(packages) -> Path:
    """Debian's crates of ``packages`` and of what they need, unpacked (cached)."""
    return _unpacked(set(packages))


def _unpacked(packages: set[str]) -> Path:
    rust = debian.closure(sorted(packages), exclude=debian.NOT_FOLLOWED)
    return debian.unpack([p for p in rust if p.startswith("librust-")], "rust-crates")


def cargo_config(registry: str) -> str:
    """The ``config.toml`` that makes cargo take every crate from the directory ``registry``."""
    return (f'[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "{registry}"\n\n'
            '[net]\noffline = true\n')


def _empty_registry() -> Path:
    path = debian.root() / "empty-registry"
    path.mkdir(exist_ok=True)
    return path


def _cargo_env(toolchain: Toolchain, home: Path, target: Path) -> dict[str, str]:
    return {**os.environ, "CARGO_HOME": str(home), "CARGO_TARGET_DIR": str(target),
            "PATH": f"{toolchain.root / toolchain.bin}:{os.environ.get('PATH', '')}",
            **{k: str(toolchain.root / v) for k, v in toolchain.env_rel.items()}}


def _resolve(tree: Path, toolchain: Toolchain, registry: Path) -> str | None:
    """cargo's complaint about resolving ``tree`` over ``registry`` (None: it resolves), asked of a
    copy of the tree (``generate-lockfile`` writes ``Cargo.lock``)."""
    with tempfile.TemporaryDirectory(prefix="sweworld-cargo-") as tmp:
        copy, home = Path(tmp) / "tree", Path(tmp) / "home"
        shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", "target"))
        home.mkdir()
        (home / "config.toml").write_text(cargo_config(str(registry)))
        got = subprocess.run([str(toolchain.host_path("cargo")), "generate-lockfile", "--offline"], cwd=copy,
                             capture_output=True, text=True, env=_cargo_env(toolchain, home, Path(tmp) / "target"))
        return None if got.returncode == 0 else got.stderr


def _complaint(stderr: str, where: str) -> EnvBuildError:
    if found := _UNMATCHED.search(stderr):
        have = re.search(r"candidate versions found which didn't match: ([^\n]+)", stderr)
        return EnvBuildError(f"crate {found.group(1)} {found.group(2)} is wanted, and Debian ships "
                             f"{have.group(1) if have else 'another version'}", where=where, hint=_HINT)
    said = [line.strip() for line in stderr.splitlines() if line.strip() and not line.lstrip().startswith("Updating")]
    tail = re.sub(r" \(/[^)]*\)", "", " ".join(said[:4]))  # one line (a drop's cause is its first), no temp path
    return EnvBuildError(f"cargo cannot resolve the dependencies over Debian's crates: {tail}", where=where,
                         hint=_HINT)


def crates_for(tree: Path, toolchain: Toolchain, *, where: str = "") -> tuple[Path, tuple[str, ...]]:
    """The directory source (Debian's ``usr/share/cargo/registry``, unpacked and cached) holding every
    crate ``tree`` needs, checked by cargo; an EnvBuildError names a crate Debian lacks (by name or
    by version) and where it is asked for. Returns (the registry, the Debian packages asked for: their
    closure is what :func:`unpacked` unpacks)."""
    where = where or str(tree)
    packages, unknown = _packages(wanted(tree))
    if unknown:
        raise _unknown_error(unknown)
    for _ in range(MAX_ROUNDS):
        registry = _unpacked(packages) / REGISTRY_IN_TREE if packages else _empty_registry()
        stderr = _resolve(tree, toolchain, registry)
        if stderr is None:
            return registry, tuple(sorted(packages))
        missing = _MISSING.search(stderr)
        if missing is None:
            raise _complaint(stderr, where)
        found = debian.provider(package_name(missing.group(1)))
        if found is None:
            raise _unknown_error([Wanted(missing.group(1), "*", (), "a dependency's Cargo.toml")])
        if found in packages:
            raise _complaint(stderr, where)
        packages.add(found)
    raise EnvBuildError(f"cargo still misses crates after {MAX_ROUNDS} rounds", where=where, hint=_HINT)
