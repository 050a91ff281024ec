"""The ordered resolver: the first source that answers gives the recipe.

Adding a source is adding a module with ``recipe(task, tree) -> EnvRecipe | None`` and its name here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.envs.recipes import default, language, swebench, swegym, swerebench
from sweworld.envs.recipes import task as own

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.envs.recipes.model import EnvRecipe

SOURCES: tuple[tuple[str, Callable[[Task, Path | None], EnvRecipe | None]], ...] = (
    ("language", language.recipe),
    ("task", own.recipe),
    ("swerebench", swerebench.recipe),
    ("swebench", swebench.recipe),
    ("swegym", swegym.recipe),
    ("default", default.recipe),
)
"""The sources, first match wins."""


def resolve_recipe(task: Task, tree: Path | None) -> EnvRecipe:
    """The recipe for a task; ``tree`` is the repository checked out at the env commit (or None).

    First match wins: a row of another language than Python (its ``language``: ``envs.lang``), the task's own fields (when it sets any of install, python, test_cmd,
    packages, pip_packages, pre_install), then a SWE-rebench row's ``install_config`` (with its
    frozen ``requirements``/``environment``), then the swebench spec for (task.repo, task.version),
    then SWE-Gym's published spec for it (``envs/swegym_specs.py``), then the default read from the tree.
    """
    for _, source in SOURCES:
        found = source(task, tree)
        if found is not None:
            return found
    raise AssertionError("the default source always answers")  # pragma: no cover
