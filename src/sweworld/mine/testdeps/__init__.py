"""A project's TEST dependencies, read from every common declaration, each with a note of where it
came from: tox (tox.ini, setup.cfg, ``[tool.tox]``, tox.toml: tox.py), nox (noxfile.py: nox.py),
pyproject.toml's dependency groups, poetry, pdm and hatch (pyproject.py). Requirement files of the
usual names and ``[project.optional-dependencies]`` test extras are read by the callers
(mine/recipes.py, envs/recipes/default.py).

Every requirement is checked as PEP 508 (``packaging.requirements.Requirement``): what is not one
(a tox factor prefix, a substitution, a local path) is dropped with a note, never handed to the
installer. A package named twice (under the same marker) keeps its first declaration (tox, nox, then pyproject.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sweworld.mine.testdeps.common import Found, canonical
from sweworld.mine.testdeps.nox import read_nox
from sweworld.mine.testdeps.pyproject import load_toml, read_pyproject
from sweworld.mine.testdeps.tox import read_tox

__all__ = ["TestDeps", "checked", "read_test_deps"]


@dataclass
class TestDeps:
    """What a test run of the project needs besides the project: requirements (checked, one per
    package), extras of its editable install, dependency groups taken, a test command seen."""

    requirements: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    test_cmd: str | None = None
    sources: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def checked(candidates: list[tuple[str, str]], project: str | None, notes: list[str]) -> tuple[list[str], list[str]]:
    """(valid requirements, one per package and marker, the first kept; extras of requirements naming the
    project itself)."""
    from packaging.requirements import InvalidRequirement, Requirement

    kept: dict[tuple[str, str], tuple[str, str]] = {}
    self_extras: list[str] = []
    for text, where in candidates:
        try:
            req = Requirement(text.strip())
        except InvalidRequirement as exc:
            notes.append(f"{where}: {text.strip()!r} is not a PEP 508 requirement "
                         f"({str(exc).splitlines()[0]}): dropped")
            continue
        if req.url and not req.url.startswith(("http://", "https://", "git+")):
            notes.append(f"{where}: {text.strip()!r} points at a local path: dropped")
            continue
        name = (canonical(req.name), str(req.marker or ""))
        if project and name[0] == canonical(project):
            self_extras += sorted(req.extras)
            notes.append(f"{where}: {text.strip()!r} is the project itself: its extras go to the editable install")
            continue
        if name in kept:
            if str(req) != kept[name][0]:
                notes.append(f"{where}: {str(req)!r} dropped: {kept[name][0]!r} from {kept[name][1]} kept")
            continue
        kept[name] = (str(req), where)
    return [req for req, _ in kept.values()], self_extras


def read_test_deps(tree: Path, python: str) -> TestDeps:
    """The test dependencies of the project checked out at ``tree`` for a test run under ``python``
    ('3.11': tox factors such as 'py311: x' are resolved for it)."""
    from sweworld.envs.scmversion import distribution_name

    found = Found()
    data: dict = {}
    if (tree / "pyproject.toml").is_file():
        data, error = load_toml(tree / "pyproject.toml")
        if error:
            found.notes.append(f"pyproject.toml: {error}: its test declarations not read")
    for part in (read_tox(tree, python, data), read_nox(tree, data)):
        if part is not None:
            found.merge(part)
    found.merge(read_pyproject(tree, data, list(found.groups)))
    requirements, self_extras = checked(found.requirements, distribution_name(tree), found.notes)
    extras = list(dict.fromkeys([*found.extras, *self_extras]))
    groups = list(dict.fromkeys(name for name, _ in found.groups))
    return TestDeps(requirements=requirements, extras=extras, groups=groups, test_cmd=found.test_cmd,
                    sources=found.sources, notes=found.notes)
