"""A Go module's dependencies, offline, from Debian's ``golang-*-dev`` packages.

Debian installs Go sources at ``/usr/share/gocode/src/IMPORT/PATH``. Each module ``go.mod`` requires
is mapped to its package (``github.com/google/go-cmp`` -> ``golang-github-google-go-cmp-dev``,
``golang.org/x/mod`` -> ``golang-golang-x-mod-dev``, ``gopkg.in/yaml.v3`` ->
``golang-gopkg-yaml.v3-dev``; apt's closure brings their own dependencies), and the build runs in
workspace mode over a ``go.work`` outside the tree (``GOWORK``) that replaces every module of the
graph by a directory: Debian's source, or an empty stand-in (a ``go.mod`` alone) for a module the
graph names and no package of the build imports. A replaced module needs no checksum and no proxy,
so the repository's ``go.sum`` and ``go.mod`` are left as they are. ``go list -deps -test ./...`` then checks that every imported package
is there, naming the module that is not.

A module without requirements needs none of this (``GOFLAGS=-mod=mod``, ``GOPROXY=off``); one with a
``vendor/modules.txt`` builds from its vendor directory (``-mod=vendor``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.errors import EnvBuildError
from sweworld.envs import debian
from sweworld.envs.toolchains import Toolchain, version_tuple

GOCODE = "usr/share/gocode/src"
_HINT = ("only Debian's golang-*-dev packages are reachable here (proxy.golang.org is not): vendor the "
         "dependencies into the repository (`go mod vendor`), or mine a commit whose go.mod needs what Debian ships")
_REQUIRE = re.compile(r"^\s*(?:require\s+)?\"?([A-Za-z0-9][^\s\"]*)\"?\s+(v[^\s]+)")
_MODULE_LINE = re.compile(r"^\s*module\s+\"?([^\s\"]+)", re.MULTILINE)


@dataclass
class GoMod:
    """What ``go.mod`` says: the module path, its ``go`` line, the required modules."""

    module: str
    go: str
    requires: list[tuple[str, str]] = field(default_factory=list)
    """(module, version) pairs."""
    toolchain: str | None = None
    replaced: set[str] = field(default_factory=set)
    """Modules its own ``replace`` directives redirect (left to them)."""


def read_gomod(path: Path) -> GoMod:
    text = path.read_text(encoding="utf-8", errors="replace")
    module = _MODULE_LINE.search(text)
    go = re.search(r"^\s*go\s+(\d+\.\d+(?:\.\d+)?)", text, re.MULTILINE)
    tool = re.search(r"^\s*toolchain\s+go(\S+)", text, re.MULTILINE)
    requires, block = [], False
    for line in text.splitlines():
        line = line.split("//")[0].rstrip()
        if re.match(r"^\s*require\s*\($", line):
            block = True
        elif block and line.strip() == ")":
            block = False
        elif (block or line.lstrip().startswith("require ")) and (found := _REQUIRE.match(line)):
            requires.append((found.group(1), found.group(2)))
    replaced = set(re.findall(r"^\s*(?:replace\s+)?\"?([^\s\"(]+)\"?(?:\s+v\S+)?\s+=>", text, re.MULTILINE))
    return GoMod(module.group(1) if module else "", go.group(1) if go else "1.16", requires,
                 tool.group(1) if tool else None, replaced)


def check_version(mod: GoMod, toolchain: Toolchain, where: str) -> None:
    """An EnvBuildError when ``go.mod``'s ``go`` line asks for a newer Go than ``toolchain`` (its
    ``toolchain`` line is a preference: ``GOTOOLCHAIN=local`` builds with the Go it has)."""
    wanted = mod.go
    if version_tuple(wanted) > version_tuple(toolchain.version):
        raise EnvBuildError(f"go.mod asks for Go {wanted}, and the Go here is {toolchain.version} "
                            f"({toolchain.origin})", where=where,
                            hint=f"put Go {wanted} or newer on PATH (https://go.dev/dl), or let sweworld pick Debian's "
                                 "(SWEWORLD_TOOLCHAIN=auto or debian)")


def candidates(module: str) -> list[str]:
    """Debian's likely package names of ``module`` (its naming habits, most usual first)."""
    host, _, rest = module.lower().partition("/")
    major = re.search(r"/(v\d+)$", rest)
    rest = rest[: major.start()] if major else rest
    labels = host.split(".")
    hosts = dict.fromkeys([".".join(labels[:-1]) or host, labels[0], host.replace(".", "-")])
    names = []
    for prefix in hosts:
        base = f"golang-{prefix}-{rest.replace('/', '-').replace('_', '-')}".rstrip("-")
        names += [f"{base}.{major.group(1)}-dev", f"{base}-{major.group(1)}-dev"] if major else []
        names.append(f"{base}-dev")
    return list(dict.fromkeys(names))


def package_of(module: str) -> str | None:
    return next((name for name in candidates(module) if debian.candidate(name)), None)


def _modules_in(tree: Path) -> dict[str, Path]:
    """Module path -> directory, for every ``go.mod`` under the unpacked ``gocode/src``."""
    found: dict[str, Path] = {}
    src = tree / GOCODE
    for gomod in sorted(src.rglob("go.mod")) if src.is_dir() else []:
        if (line := _MODULE_LINE.search(gomod.read_text(encoding="utf-8", errors="replace"))) is not None:
            found.setdefault(line.group(1), gomod.parent)
    return found


@dataclass
class Plan:
    """The replacements of a module's graph: module -> its directory under Debian's ``gocode/src``
    (relative) or None (a stand-in: a ``go.mod`` alone); ``main_versions`` the versions at which the
    graph requires the main module back (a cycle: replaced by a stand-in too); ``packages`` the
    Debian packages to unpack."""

    replace: dict[str, str | None]
    packages: tuple[str, ...]
    main: str = ""
    main_versions: tuple[str, ...] = ()
    tree: Path | None = None


def plan(tree: Path) -> Plan:
    """The replacements for ``tree``'s ``go.mod`` (see the module docstring)."""
    mod = read_gomod(tree / "go.mod")
    wanted = sorted({p for m, _v in mod.requires if m not in mod.replaced and (p := package_of(m))})
    golang = [p for p in debian.closure(wanted) if p.startswith("golang-") and p.endswith("-dev")] if wanted else []
    unpacked = debian.unpack(golang, "go-modules") if golang else None
    found = _modules_in(unpacked) if unpacked else {}
    graph: dict[str, str | None] = {}
    cycle: set[str] = set()
    todo = [r for r in mod.requires if r[0] not in mod.replaced]
    while todo:
        module, version = todo.pop()
        if module == mod.module:
            cycle.add(version)
            continue
        if module in graph:
            continue
        directory = found.get(module) or (_bare_dir(unpacked, module) if unpacked else None)
        graph[module] = directory.relative_to(unpacked / GOCODE).as_posix() if directory else None
        if directory is not None and (directory / "go.mod").is_file():
            todo += read_gomod(directory / "go.mod").requires
    return Plan(graph, tuple(golang), mod.module, tuple(sorted(cycle)), unpacked)


def _bare_dir(unpacked: Path, module: str) -> Path | None:
    """Debian's source of ``module`` that has no ``go.mod`` of its own (older packages)."""
    directory = unpacked / GOCODE / module
    return directory if directory.is_dir() else None


def replace_lines(plan: Plan, sources: str, stubs: str) -> list[str]:
    """The ``replace`` directives appended to ``go.mod`` (through ``-modfile``): each module to its
    source under ``sources`` or its stand-in under ``stubs``."""
    lines = [f"replace {m} => {sources}/{d}" if d else f"replace {m} => {stubs}/{m}" for m, d in sorted(plan.replace.items())]
    lines += [f"replace {plan.main} {v} => {stubs}/_main" for v in plan.main_versions]
    return lines


def stub_modules(plan: Plan) -> dict[str, str]:
    """Stand-in directory (relative) -> its ``go.mod``."""
    stubs = {m: f"module {m}\n\ngo 1.16\n" for m, d in plan.replace.items() if d is None}
    if plan.main_versions:
        stubs["_main"] = f"module {plan.main}\n\ngo 1.16\n"
    return stubs


def missing_gomods(plan: Plan) -> dict[str, str]:
    """Debian's sources with no ``go.mod`` (older packages): directory (relative) -> the one to write."""
    if plan.tree is None:
        return {}
    return {d: f"module {m}\n\ngo 1.16\n" for m, d in plan.replace.items()
            if d and not (plan.tree / GOCODE / d / "go.mod").is_file()}


def _lay_out(plan: Plan, root: Path) -> Path:
    """Sources and stand-ins of ``plan`` under ``root`` (a check on this machine); the modfile lines."""
    sources = root / "src"
    if plan.tree is not None:
        shutil.copytree(plan.tree / GOCODE, sources, ignore_dangling_symlinks=True)
    for rel, text in {**{f"src/{d}": t for d, t in missing_gomods(plan).items()},
                      **{f"stubs/{d}": t for d, t in stub_modules(plan).items()}}.items():
        (root / rel).mkdir(parents=True, exist_ok=True)
        (root / rel / "go.mod").write_text(text)
    return root / "replace.mod"


def go_env(toolchain: Toolchain, modfile: Path | None, home: Path) -> dict[str, str]:
    """What ``go`` runs with offline: no proxy, no checksum database, this toolchain only."""
    return {"PATH": f"{toolchain.root / toolchain.bin}:{os.environ.get('PATH', '')}", "GOWORK": "off",
            "GOPROXY": "off", "GOSUMDB": "off", "GOTOOLCHAIN": "local", "GOTELEMETRY": "off",
            "GOFLAGS": "-mod=mod" + (f" -modfile={modfile}" if modfile else ""), "GOCACHE": str(home / "cache"),
            "GOPATH": str(home / "gopath"), "HOME": str(home),
            **{k: str(toolchain.root / v) for k, v in toolchain.env_rel.items()}}


def check(tree: Path, toolchain: Toolchain, where: str = "") -> Plan:
    """The plan of ``tree``, checked: ``go list -deps -test ./...`` over a copy finds every package."""
    where = where or str(tree)
    mod = read_gomod(tree / "go.mod")
    check_version(mod, toolchain, where)
    if (tree / "vendor" / "modules.txt").is_file():
        return Plan({}, ())
    found = plan(tree)
    with tempfile.TemporaryDirectory(prefix="sweworld-go-") as tmp:
        copy = Path(tmp) / "tree"
        shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        modfile = None
        if found.replace or found.main_versions:
            modfile = _lay_out(found, Path(tmp) / "deps")
            lines = replace_lines(found, str(Path(tmp) / "deps" / "src"), str(Path(tmp) / "deps" / "stubs"))
            modfile.write_text((tree / "go.mod").read_text() + "\n" + "\n".join(lines) + "\n")
        got = subprocess.run([str(toolchain.host_path("go")), "list", "-deps", "-test", "./..."], cwd=copy,
                             capture_output=True, text=True, env={**os.environ, **go_env(toolchain, modfile,
                                                                                           Path(tmp) / "home")})
    if got.returncode != 0:
        stand_ins = sorted(m for m, d in found.replace.items() if d is None)
        tail = "\n".join(got.stderr.strip().splitlines()[-6:])
        raise EnvBuildError(f"go cannot load the packages over Debian's sources: {tail}", where=where,
                            hint=(f"no Debian package holds {', '.join(stand_ins)} (looked for "
                                  f"{', '.join(candidates(stand_ins[0]))}); " if stand_ins else "") + _HINT)
    return found
