"""The source of a task's own environment fields; what it leaves out comes from the default recipe."""

from __future__ import annotations

from pathlib import Path

from sweworld.core.types import Task
from sweworld.envs import swebench_specs as sbs
from sweworld.envs.recipes.default import default_recipe
from sweworld.envs.recipes.model import (
    DEFAULT_INSTALL,
    DEFAULT_TEST_CMD,
    EnvRecipe,
)
from sweworld.envs.recipes.packages import _packages


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
    if task.install is None:  # the default install: deps in the env stage, --no-deps per instance
        recipe.install = DEFAULT_INSTALL
        recipe.install_repo_in_env = True
        recipe.install_extras = base.install_extras
        if not recipe.packages and not recipe.requirements_files:
            recipe.packages = ["pytest"]
    if task.test_cmd is None:
        notes.append(f"test_cmd defaults to '{DEFAULT_TEST_CMD}'")
    return recipe


def recipe(task: Task, tree: Path | None) -> EnvRecipe | None:
    """The task's own recipe when it sets any of install, python, test_cmd, packages, pip_packages,
    pre_install; None otherwise."""
    own = (task.install, task.python, task.test_cmd, task.packages, task.pip_packages, task.pre_install)
    return from_task(task, tree) if any(value is not None for value in own) else None
