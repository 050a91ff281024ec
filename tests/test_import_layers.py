"""The import floors of DESIGN.md hold: ``lint-imports`` on the contracts of ``.importlinter``.

A wrong arrow (a tool importing the sandbox, the harness opening environments...) fails here with
the chain of imports that breaks the floor. No contract ignores an arrow. ``FLOORS`` is the table of
docs/architecture.md ("Floors"): every arrow between two packages, lazy imports counted, points to
the same floor or one below.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: docs/architecture.md's floors, from the ground up; an old module name kept as an alias stands with
#: its new home (``types`` is ``core.types``...).
FLOORS = [
    {"__init__", "core", "types", "errors", "paths", "names", "images", "executor", "protocols", "registry", "config"},
    {"shell", "parallel", "shipping", "testing", "isolation_probes", "usage", "trajectory", "pyast", "covmap",
     "datasets", "runlock", "cas", "envsource", "toxenv"},
    {"tasks", "repos", "sandbox", "models", "htmlreport", "oci"},
    {"envs", "tools"},
    {"agents", "harness"},
    {"world"},
    {"surrogates"},
    {"backends", "seam"},
    {"runs"},
    {"synth", "mine", "integrations", "data", "verify", "rl"},
    {"train", "cli"},
]
RUN = ("from importlinter.cli import lint_imports\n"
       "raise SystemExit(lint_imports(config_filename='.importlinter', no_cache=True, no_logo=True))")


def test_import_floors_hold():
    pytest.importorskip("importlinter", reason="import-linter is not installed (pip install import-linter, "
                        "part of the dev extra): the import floors are not checked")
    result = subprocess.run([sys.executable, "-c", RUN], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and " kept" in result.stdout, result.stdout


def test_integrations_name_nothing_of_the_sandbox_not_even_for_type_checking():
    """The contracts do not count ``TYPE_CHECKING`` imports; the integrations may not have those either:
    they take a Backend and never see a sandbox."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "src/sweworld/integrations").glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if "sweworld.sandbox" in line and ("import" in line)]
    assert not found, found


def _circles(graph) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_imports_itself_through_others_lazy_imports_counted():
    """No import circle between modules, counting imports inside functions (a lazy import that dodges
    a circle at import time is still a circle); only ``if TYPE_CHECKING:`` imports are left out."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the dev extra)")
    graph = grimp.build_graph("sweworld", exclude_type_checking_imports=True)
    assert _circles(graph) == []


def test_every_arrow_points_to_its_own_floor_or_below():
    """The floors of docs/architecture.md, checked on the whole graph (imports inside functions too):
    no package imports one on a floor above it. A package missing from ``FLOORS`` fails too."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the dev extra)")
    graph = grimp.build_graph("sweworld", exclude_type_checking_imports=True)
    floor = {name: level for level, names in enumerate(FLOORS) for name in names}

    def package(module: str) -> str:
        return [*module.split("."), "__init__"][1]

    unplaced = sorted({package(m) for m in graph.modules} - floor.keys())
    assert not unplaced, f"packages on no floor of FLOORS (and docs/architecture.md): {unplaced}"
    up = sorted(f"{m} -> {d}" for m in graph.modules for d in graph.find_modules_directly_imported_by(m)
                if floor[package(d)] > floor[package(m)])
    assert up == []
