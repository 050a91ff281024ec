"""The default recipe, read from the tree at the env commit: the project's Python bound, its test
extras, an editable install."""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task
from sweworld.envs.recipes.model import (
    DEFAULT_EXTRAS,
    DEFAULT_INSTALL,
    DEFAULT_PYTHON,
    DEFAULT_TEST_CMD,
    EnvRecipe,
)


def _norm_extra(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def load_toml(path: Path) -> tuple[dict[str, Any], str | None]:
    """(the TOML document at ``path``, None) or ({}, why it could not be read)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8", errors="replace")), None
    except (tomllib.TOMLDecodeError, OSError) as exc:
        return {}, f"not valid TOML ({exc})"


def _load_toml(path: Path) -> dict[str, Any]:
    return load_toml(path)[0]


def read_extras(tree: Path) -> tuple[set[str], str | None]:
    """(extras declared by the project, requires-python) from pyproject.toml, setup.cfg, setup.py."""
    extras: set[str] = set()
    requires: str | None = None
    pyproject = tree / "pyproject.toml"
    if pyproject.is_file():
        project = _load_toml(pyproject).get("project") or {}
        extras.update((project.get("optional-dependencies") or {}).keys())
        requires = project.get("requires-python")
    setup_cfg = tree / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg.read_text(encoding="utf-8", errors="replace"))
        except configparser.Error:
            parser.clear()
        if parser.has_section("options.extras_require"):
            extras.update(parser.options("options.extras_require"))
        if requires is None and parser.has_option("options", "python_requires"):
            requires = parser.get("options", "python_requires").strip()
    setup_py = tree / "setup.py"
    if setup_py.is_file():
        text = setup_py.read_text(encoding="utf-8", errors="replace")
        if "extras_require" in text:
            names = "|".join(DEFAULT_EXTRAS)
            extras.update(re.findall(rf"""['"]({names})['"]\s*:\s*[\[(]""", text))
        match = re.search(r"""python_requires\s*=\s*['"]([^'"]+)['"]""", text)
        if requires is None and match:
            requires = match.group(1)
    return extras, requires


def pick_python(requires_python: str | None, notes: list[str]) -> str:
    """DEFAULT_PYTHON when requires-python allows it (the most compatible choice for old releases),
    else the newest interpreter here (3.x) that it allows."""
    if not requires_python:
        notes.append(f"no requires-python: Python {DEFAULT_PYTHON}")
        return DEFAULT_PYTHON
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from sweworld.envs.discovery import find_interpreter, list_interpreters

    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        notes.append(f"requires-python '{requires_python}' not understood: Python {DEFAULT_PYTHON}")
        return DEFAULT_PYTHON
    try:
        if find_interpreter(DEFAULT_PYTHON).full_version in spec:
            notes.append(f"requires-python '{requires_python}': Python {DEFAULT_PYTHON}")
            return DEFAULT_PYTHON
    except EnvBuildError:
        pass
    allowed = [i for i in list_interpreters() if i.version_tuple >= (3, 0) and i.full_version in spec]
    if not allowed:
        notes.append(f"no interpreter here satisfies requires-python '{requires_python}': "
                     f"Python {DEFAULT_PYTHON}")
        return DEFAULT_PYTHON
    best = allowed[-1].version
    notes.append(f"requires-python '{requires_python}': Python {best}")
    return best


def default_recipe(tree: Path | None) -> EnvRecipe:
    """``pip install -e .[test extras]`` at the env commit plus pytest; Python from requires-python."""
    notes: list[str] = []
    if tree is None:
        notes.append(f"no tree to read: no extras, Python {DEFAULT_PYTHON}")
        extras, requires = set(), None
    else:
        extras, requires = read_extras(tree)
    present = {_norm_extra(e): e for e in extras}
    chosen = [present[_norm_extra(n)] for n in DEFAULT_EXTRAS if _norm_extra(n) in present]
    chosen = list(dict.fromkeys(chosen))
    notes.append(f"default recipe: editable install with extras {chosen} plus pytest")
    return EnvRecipe(python=pick_python(requires, notes) if tree is not None else DEFAULT_PYTHON,
                     packages=["pytest"], install_repo_in_env=True, install_extras=chosen,
                     install=DEFAULT_INSTALL, test_cmd=DEFAULT_TEST_CMD, source="default", notes=notes)


# --- translation of swebench-style fields -------------------------------------------------------


def recipe(task: Task, tree: Path | None) -> EnvRecipe:
    """The default read from the tree: it always answers, so it comes last."""
    return default_recipe(tree)
