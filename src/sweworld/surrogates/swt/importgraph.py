"""A static import graph of a Python repository: which files a test file imports, transitively.

``build_graph(files)`` (path -> text) maps each ``.py`` file to the repository files its imports
name: ``import a.b.c`` imports ``a/__init__.py``, ``a/b/__init__.py`` and ``a/b/c.py``; ``from a.b
import c`` also ``a/b/c.py`` when that is a module; relative imports resolve against the file's
package. A module's dotted name is its path below the highest directory of an unbroken chain of
packages (``src/pkg/mod.py`` -> ``pkg.mod``). ``reaches(graph, start)`` is the set of files
``start`` imports, directly or not (itself included). ``graph_of_tree(root)`` reads a checkout.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import Path

from sweworld import pyast

SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "dist", ".tox", "__pycache__", ".eggs"}
MAX_FILES = 5000
MAX_BYTES = 1_000_000


def module_names(paths: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> path, for the ``.py`` files among ``paths``."""
    paths = [p for p in paths if p.endswith(".py")]
    packages = {posixpath.dirname(p) for p in paths if p.endswith("/__init__.py")}
    out: dict[str, str] = {}
    for path in paths:
        directory, name = posixpath.split(path[:-3])
        parts = [] if name == "__init__" else [name]
        while directory in packages:
            directory, package = posixpath.split(directory)
            parts.insert(0, package)
        if parts:
            out.setdefault(".".join(parts), path)
    return out


def imported_names(tree: ast.AST, package: str) -> list[str]:
    """The absolute dotted names the imports anywhere in ``tree`` name, relative ones resolved
    against ``package`` (``from a import b``: ``a`` and ``a.b``, as ``b`` may be a module)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[:len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, *([base] if base else [])])
            names += [base, *(f"{base}.{alias.name}" if base else alias.name
                              for alias in node.names if alias.name != "*")]
    return [name for name in names if name]


def _imported(path: str, text: str, modules: Mapping[str, str], own: str) -> list[str]:
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names = imported_names(tree, own if path.endswith("__init__.py") else own.rpartition(".")[0])
    found: dict[str, None] = {}
    for name in names:
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            target = modules.get(".".join(parts[:k]))
            if target and target != path:
                found[target] = None
    return list(found)


def build_graph(files: Mapping[str, str]) -> dict[str, list[str]]:
    """Path -> the repository files its imports name (see the module docstring)."""
    modules = module_names(files)
    names = {path: name for name, path in modules.items()}
    return {path: _imported(path, text, modules, names.get(path, "")) for path, text in files.items()
            if path.endswith(".py")}


def reaches(graph: Mapping[str, list[str]], start: str) -> set[str]:
    """The files ``start`` imports directly or transitively, ``start`` included."""
    seen = {start}
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def graph_of_tree(root: Path) -> dict[str, list[str]]:
    """``build_graph`` of the ``.py`` files of a checkout (build and VCS directories skipped)."""
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if SKIP_DIRS & set(rel.parts[:-1]) or not path.is_file() or path.stat().st_size > MAX_BYTES:
            continue
        files[rel.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
        if len(files) >= MAX_FILES:
            break
    return build_graph(files)
