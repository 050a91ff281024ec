"""The environment of a mined instance, chosen per repository and release line as swebench does.

1. A repository that the ``swebench`` package has install specs for: ``version`` snapped to its
   known release lines; the row carries no environment fields (the spec decides, as for
   SWE-bench's own rows).
2. A repository of SWE-Gym's (``envs/swegym_specs.py``): the same with SWE-Gym's published specs.
3. Anything else: a recipe inferred from the tree at the environment commit and written on the row
   (``python``, ``packages``, ``pip_packages``, ``test_cmd``, ``exclude_newer``), with
   ``recipe_source: "inferred"`` and ``recipe_notes`` saying what was guessed and from what. The
   editable install with the project's test extras comes from the default recipe (envs/recipes/default.py).

Python for an inferred recipe: the versions the project declares (``requires-python``, trove
classifiers), the newest of them released before the environment commit (an interpreter of 2019
for a 2019 commit), among the interpreters found here. Unpinned requirements resolve as of the
environment commit's date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sweworld.envs import swebench_specs, swegym_specs
from sweworld.envs.recipes import read_extras
from sweworld.envs.recipes.model import DEFAULT_EXTRAS
from sweworld.mine.testdeps import read_test_deps
from sweworld.mine.testdeps.build import plan_build
from sweworld.mine.testdeps.common import canonical
from sweworld.mine.testdeps.locks import test_constraints
from sweworld.mine.testdeps.pyproject import load_toml
from sweworld.mine.testdeps.pytestcfg import test_flags
from sweworld.mine.version import snap

PYTHON_RELEASED = {"3.6": "2016-12-23", "3.7": "2018-06-27", "3.8": "2019-10-14", "3.9": "2020-10-05",
                   "3.10": "2021-10-04", "3.11": "2022-10-24", "3.12": "2023-10-02", "3.13": "2024-10-07"}
"""First release of each Python line (python.org), for the era of a commit."""
ERA_LAG_DAYS = 180
"""A Python line counts for a commit once it has been out this long (projects adopt it late)."""
TEST_REQUIREMENTS = ("requirements-dev.txt", "requirements-test.txt", "requirements_test.txt",
                     "requirements-tests.txt", "test-requirements.txt", "test_requirements.txt",
                     "dev-requirements.txt", "requirements_dev.txt", "requirements/test.txt",
                     "requirements/tests.txt", "requirements/testing.txt", "requirements/dev.txt",
                     "tests/requirements.txt", "requirements/tests.in", "requirements-testing.txt")
_CLASSIFIER = re.compile(r"Programming Language :: Python :: (3\.\d+)")

Kind = Literal["swebench", "swegym", "inferred"]


@dataclass
class Choice:
    """How one release line of a repository gets its environment."""

    kind: Kind
    version: str
    fields: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def known_versions(repo: str) -> tuple[Kind, list[str]] | None:
    """(which table, its release lines) for a repository with published specs, else None."""
    if swebench_specs.has_repo(repo):
        return "swebench", list(swebench_specs.all_specs()[repo])
    if swegym_specs.has_repo(repo):
        return "swegym", swegym_specs.versions(repo)
    return None


def version_for(repo: str, read: str | None) -> tuple[Kind, str]:
    """(kind, ``version``) of a commit whose tree says it is release line ``read``."""
    known = known_versions(repo)
    if known is not None:
        kind, lines = known
        return kind, snap(read or "0.0", lines) or (read or "0.0")
    return "inferred", read or "0.0"


def provenance(repo: str, kind: Kind, version: str) -> dict[str, Any]:
    """``recipe_source``, ``recipe_spec_version`` and ``recipe_specs`` of a mined row (see candidates.py)."""
    if kind == "inferred":
        return {"recipe_source": kind, "recipe_spec_version": None, "recipe_specs": None}
    if kind == "swebench":
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed

        try:
            table = f"swebench=={installed('swebench')}"
        except PackageNotFoundError:  # pragma: no cover - swebench is a dependency
            table = "swebench"
        found = swebench_specs.spec_for(repo, version) is not None
    else:
        table = "SWE-Gym specs (SWE-Gym/SWE-Bench-Fork, envs/swegym_specs.py)"
        found = swegym_specs.spec_for(repo, version) is not None
    return {"recipe_source": kind, "recipe_spec_version": version if found else None, "recipe_specs": table}


def _classifiers(tree: Path) -> list[str]:
    text = ""
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        path = tree / name
        if path.is_file():
            text += path.read_text(encoding="utf-8", errors="replace")
    return sorted(set(_CLASSIFIER.findall(text)), key=lambda v: tuple(int(p) for p in v.split(".")))


def era_python(date: str, declared: list[str], requires: str | None, available: list[str]) -> tuple[str, str]:
    """(Python 'X.Y', why) for a commit of ``date`` (ISO)."""
    from datetime import date as Date
    from datetime import timedelta

    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    day = Date.fromisoformat(date[:10]) - timedelta(days=ERA_LAG_DAYS)
    out_then = [v for v, released in PYTHON_RELEASED.items() if Date.fromisoformat(released) <= day]
    try:
        spec = SpecifierSet(requires) if requires else None
    except InvalidSpecifier:
        spec = None
    allowed = [v for v in available if v in PYTHON_RELEASED and (spec is None or spec.contains(f"{v}.0"))]
    for pool, why in ((declared, "declared in the classifiers"), (allowed, "allowed by requires-python")):
        chosen = [v for v in pool if v in allowed and v in out_then]
        if chosen:
            return chosen[-1], f"the newest Python {why} that was out by {date[:10]}"
    fallback = (allowed or available or ["3.11"])[0 if out_then == [] else -1]
    return fallback, f"no declared Python of the commit's era; Python {fallback}"


def infer(tree: Path, env_date: str, available: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(row fields, notes) of a recipe read from ``tree`` (the environment commit's checkout)."""
    notes: list[str] = []
    extras, requires = read_extras(tree)
    python, why = era_python(env_date, _classifiers(tree), requires, available)
    notes.append(f"python {python}: {why}" + (f" (requires-python '{requires}')" if requires else ""))
    fields: dict[str, Any] = {"python": python, "test_cmd": "pytest -rA", "exclude_newer": env_date[:10]}
    notes.append(f"unpinned requirements as of {env_date[:10]} (the environment commit's date)")
    found = next((name for name in TEST_REQUIREMENTS if (tree / name).is_file()), None)
    if found:
        fields["packages"] = found
        notes.append(f"test requirements from {found}")
    deps = read_test_deps(tree, python)
    notes += deps.notes
    if deps.requirements:
        notes.append(f"test dependencies from {', '.join(deps.sources)}: {' '.join(deps.requirements)}")
    if deps.groups:
        notes.append(f"dependency groups installed: {', '.join(deps.groups)}")
    if deps.test_cmd:
        notes.append(f"the noxfile runs the tests with '{deps.test_cmd}'")
    data = load_toml(tree / "pyproject.toml")[0] if (tree / "pyproject.toml").is_file() else {}
    build = plan_build(tree, data, env_date)
    notes += build.notes
    has_pytest = any(canonical(re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0]) == "pytest" for r in deps.requirements)
    fields["pip_packages"] = list(dict.fromkeys([*([] if has_pytest else ["pytest"]), *deps.requirements,
                                                 *build.requires]))
    if build.requires:
        notes.append(f"build requirements installed too (the reinstall of a patched tree builds without isolation): "
                     f"{' '.join(build.requires)}")
    if not build.isolation:
        fields["build_isolation"] = False
    named = [e for e in deps.extras if e not in extras and canonical(e) not in {canonical(x) for x in DEFAULT_EXTRAS}]
    if deps.extras:
        fields["install_extras"] = list(dict.fromkeys(deps.extras))
        notes.append(f"extras of the editable install from the test declarations: {', '.join(deps.extras)}"
                     + (f" ({', '.join(named)} not among the extras read from the packaging files)" if named else ""))
    pins, pin_notes = test_constraints(tree, fields["pip_packages"])
    if pins:
        fields["constraints"] = pins
    notes += pin_notes
    flags, flag_notes = test_flags(tree)
    fields["test_cmd"] = " ".join(["pytest -rA", *flags])
    notes += flag_notes
    notes.append(f"test command '{fields['test_cmd']}' on the files the test patch touches; the repository installed "
                 "editable with its test extras at the environment commit")
    return fields, notes
