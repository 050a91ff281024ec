"""The versions a project's lock file pins for its test tools, as constraints of its environment.

An environment resolves unpinned requirements as of its commit's date; a project that locks its
dependencies (``uv.lock``, ``poetry.lock``, ``pdm.lock``: TOML with ``[[package]]`` name and version)
ran its tests with the versions it locked, which may be older than the newest of that date (a lock
not yet bumped to a pytest whose new deprecation its ``filterwarnings = error`` turns into a
collection error). The test requirements and pytest's plugins are constrained to the locked version
of each; a package locked at more than one version (per Python) is left free, with a note.
"""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement

from sweworld.mine.testdeps.common import canonical
from sweworld.mine.testdeps.pyproject import load_toml

LOCKS = ("uv.lock", "poetry.lock", "pdm.lock")


def locked(tree: Path) -> tuple[dict[str, str], str | None, list[str]]:
    """(canonical name -> the one version locked, the lock file, names locked at several versions)."""
    for name in LOCKS:
        path = tree / name
        if not path.is_file():
            continue
        data, _error = load_toml(path)
        versions: dict[str, set[str]] = {}
        for package in data.get("package") or []:
            if isinstance(package, dict) and isinstance(package.get("name"), str) and package.get("version"):
                versions.setdefault(canonical(package["name"]), set()).add(str(package["version"]))
        single = {n: next(iter(v)) for n, v in versions.items() if len(v) == 1}
        return single, name, sorted(n for n, v in versions.items() if len(v) > 1)
    return {}, None, []


def test_constraints(tree: Path, requirements: list[str]) -> tuple[list[str], list[str]]:
    """(constraint lines ``name==version`` for the test requirements and pytest's plugins, notes)."""
    pins, lock, several = locked(tree)
    if lock is None:
        return [], []
    wanted = {canonical(Requirement(r).name) for r in requirements}  # already checked requirements
    wanted |= {n for n in pins if n == "pytest" or n.startswith("pytest-")}
    lines = [f"{n}=={pins[n]}" for n in sorted(wanted) if n in pins]
    notes = [f"test tools pinned to {lock}'s versions: {' '.join(lines)}"] if lines else []
    free = sorted(n for n in wanted if n in several)
    if free:
        notes.append(f"{lock} locks several versions of {', '.join(free)} (per Python): left free")
    return lines, notes
