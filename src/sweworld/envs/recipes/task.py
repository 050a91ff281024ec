"""The source of a task's own environment fields; what it leaves out comes from the default recipe."""

from __future__ import annotations

import re
from pathlib import Path

from sweworld.core.types import Task, as_list
from sweworld.envs import swebench_specs as sbs
from sweworld.envs.recipes.default import default_recipe
from sweworld.envs.recipes.model import (
    DEFAULT_INSTALL,
    DEFAULT_TEST_CMD,
    EnvRecipe,
)
from sweworld.envs.recipes.packages import _packages

NO_ISOLATION_INSTALL = "python -m pip install --no-deps --no-build-isolation -e ."
"""The default install of a repo whose build needs the venv's own packages (``build_isolation: false``)."""
EXTRA_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
"""A valid extra name (PEP 685: a name of letters, digits and . _ -)."""


def from_task(task: Task, tree: Path | None) -> EnvRecipe:
    """The task's own fields; missing python/install/test_cmd come from the default recipe."""
    notes: list[str] = []
    fields = _packages(task.packages, task.repo, tree, notes)
    base = default_recipe(tree) if (task.python is None or task.install is None) else None
    if base is not None:
        filled = [n for n in ("python", "install") if getattr(task, n) is None]
        notes.append(f"task fields used; {', '.join(filled)} from the default recipe")
        notes.extend(base.notes)
    recipe = EnvRecipe(python=task.python or base.python, **fields, pip_packages=list(task.pip_packages or []),
                       pre_install=sbs.drop_system_commands(list(task.pre_install or []), "pre_install", notes),
                       install=task.install, test_cmd=task.test_cmd or DEFAULT_TEST_CMD, source="task",
                       exclude_newer=task.exclude_newer, notes=notes)
    recipe.constraints = _row_constraints(task, notes)
    if task.install is None:  # the default install: deps in the env stage, --no-deps per instance
        recipe.install_repo_in_env = True
        recipe.install_extras = list(dict.fromkeys([*base.install_extras, *_row_extras(task, notes)]))
        recipe.build_isolation = _row_isolation(task)
        recipe.install = DEFAULT_INSTALL if recipe.build_isolation else NO_ISOLATION_INSTALL
        if not recipe.packages and not recipe.requirements_files:
            recipe.packages = ["pytest"]
    if task.test_cmd is None:
        notes.append(f"test_cmd defaults to '{DEFAULT_TEST_CMD}'")
    return recipe


def _row_extras(task: Task, notes: list[str]) -> list[str]:
    """The row's ``install_extras`` (a mined row's extras from its test declarations, mine/testdeps),
    a list or a JSON-encoded one; names that are not extra names are dropped with a note."""
    value = as_list((task.model_extra or {}).get("install_extras"))
    names = [v for v in value if isinstance(v, str) and EXTRA_NAME.match(v)]
    if len(names) != len(value):
        notes.append(f"install_extras {value!r}: only extra names kept: {names}")
    return names


def _row_constraints(task: Task, notes: list[str]) -> list[str]:
    """The row's ``constraints`` (a mined row's test tools pinned by its lock file, mine/testdeps/locks.py):
    requirement lines every install of the env stage obeys; what is not one is dropped with a note."""
    from packaging.requirements import InvalidRequirement, Requirement

    value = as_list((task.model_extra or {}).get("constraints"))
    kept = []
    for line in value if isinstance(value, list) else []:
        try:
            Requirement(str(line))
            kept.append(str(line))
        except InvalidRequirement:
            notes.append(f"constraint {line!r} is not a requirement: dropped")
    return kept


def _row_isolation(task: Task) -> bool:
    """False when the row says ``build_isolation: false`` (mine/testdeps/build.py says when)."""
    return str((task.model_extra or {}).get("build_isolation", True)).strip().lower() not in ("false", "0", "no")


def recipe(task: Task, tree: Path | None) -> EnvRecipe | None:
    """The task's own recipe when it sets any of install, python, test_cmd, packages, pip_packages,
    pre_install; None otherwise."""
    own = (task.install, task.python, task.test_cmd, task.packages, task.pip_packages, task.pre_install)
    return from_task(task, tree) if any(value is not None for value in own) else None
