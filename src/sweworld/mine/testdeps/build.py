"""How the project itself builds: its build requirements (into the environment, where the offline
reinstall of a patched tree, which builds without isolation, finds them) and whether its editable
install can be built in isolation at all.

Two cases cannot, and are built with the environment's own packages instead (``build_isolation:
false`` on the row; envs/scripts.py passes ``--no-build-isolation``):

- a build that imports Cython (``.pyx`` sources, generated C not in the repository) or numpy that its
  build requirements do not declare (a legacy setup.py): an isolated build has setuptools alone;
- a setuptools build of a commit older than setuptools 64 (the first with PEP 660 editable installs):
  an isolated build resolves its build requirements as of the commit's date like every other one
  (uv's ``--exclude-newer``), gets a setuptools without ``build_editable`` and fails; the
  environment's own setuptools (the one its virtualenv was seeded with) builds it.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.mine.testdeps.common import as_strings, canonical

SETUPTOOLS_PEP660 = "2022-08-11"
"""setuptools 64.0.0, the first release with PEP 660 editable installs (``build_editable``)."""
SETUPTOOLS_BACKENDS = ("setuptools.build_meta", "setuptools.build_meta:__legacy__")
LEGACY_REQUIRES = ("setuptools>=40.8.0", "wheel")
"""What pip and uv build a project without ``[build-system]`` with (PEP 517's fallback)."""
RENAMED = {"oldest-supported-numpy": "numpy"}
"""Build requirements that only pin others for building wheels: what the environment gets instead."""


@dataclass
class BuildPlan:
    """The project's build: requirements for the environment, isolation, why."""

    requires: list[str] = field(default_factory=list)
    isolation: bool = True
    notes: list[str] = field(default_factory=list)


def has_pyx(tree: Path) -> bool:
    """Whether the tree holds Cython sources (``.pyx``), outside .git."""
    for _root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        if any(name.endswith(".pyx") for name in files):
            return True
    return False


def setup_requires(tree: Path) -> list[str]:
    """``setup_requires`` of setup.cfg (``[options]``) or a literal list in setup.py."""
    cfg = tree / "setup.cfg"
    if cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(cfg.read_text(encoding="utf-8", errors="replace"))
            raw = parser.get("options", "setup_requires", fallback="")
            if raw.strip():
                return [line.strip() for line in raw.splitlines() if line.strip()]
        except configparser.Error:
            pass
    setup_py = tree / "setup.py"
    try:
        module = ast.parse(setup_py.read_text(encoding="utf-8", errors="replace")) if setup_py.is_file() else None
    except (SyntaxError, ValueError):
        module = None
    for node in ast.walk(module) if module else []:
        if isinstance(node, ast.keyword) and node.arg == "setup_requires" and isinstance(node.value, (ast.List, ast.Tuple)):
            return [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _imports(tree: Path, module: str) -> bool:
    path = tree / "setup.py"
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    return re.search(rf"(?m)^\s*(?:import|from)\s+{module}\b", text) is not None


def plan_build(tree: Path, pyproject: dict, env_date: str) -> BuildPlan:
    """The build of the project at ``tree`` (``pyproject``: its pyproject.toml, {} if none) for an
    environment of ``env_date`` (ISO)."""
    from sweworld.mine.testdeps import checked

    plan = BuildPlan()
    system = pyproject.get("build-system") if isinstance(pyproject.get("build-system"), dict) else {}
    backend = system.get("build-backend")
    if "requires" in system:
        where, declared = "pyproject.toml [build-system] requires", as_strings(system["requires"])
    else:
        where, declared = "the legacy setup.py build (no [build-system])", [*LEGACY_REQUIRES, *setup_requires(tree)]
    for old, new in RENAMED.items():
        if any(canonical(r).startswith(old) for r in declared):
            plan.notes.append(f"{where}: {old} stands for {new} in the environment")
    declared = [RENAMED.get(canonical(re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0]), r) for r in declared]
    requires, _ = checked([(r, where) for r in declared], None, plan.notes)
    names = {canonical(re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0]) for r in requires}
    missing = [name for name, needed in (("Cython", has_pyx(tree) or _imports(tree, "Cython")),
                                         ("numpy", _imports(tree, "numpy"))) if needed and canonical(name) not in names]
    if missing:
        plan.notes.append(f"the build needs {' and '.join(missing)} ({where} does not say so): built without "
                          "isolation, with the environment's packages")
    in_tree = bool(system.get("backend-path")) and "setuptools" in names  # an in-tree wrapper of setuptools (PyYAML's)
    setuptools = backend in SETUPTOOLS_BACKENDS or "requires" not in system or backend is None or in_tree
    old = setuptools and env_date[:10] < SETUPTOOLS_PEP660
    if old:
        dropped = [r for r in requires if canonical(re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0]) == "setuptools"]
        requires = [r for r in requires if r not in dropped]
        plan.notes.append(f"a setuptools build of {env_date[:10]}, before setuptools 64 (PEP 660 editable installs, "
                          f"{SETUPTOOLS_PEP660}): built without isolation by the environment's own setuptools"
                          + (f" ({', '.join(dropped)} not installed)" if dropped else ""))
    plan.requires = [*requires, *missing]
    plan.isolation = not (missing or old)
    return plan
