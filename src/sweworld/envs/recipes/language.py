"""The source of a row of another language than Python (its ``language`` field, ``envs.lang``):
the language turns its ``install_config`` into the recipe (inferring what is missing from the tree)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.envs import lang

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.envs.recipes.model import EnvRecipe


def recipe(task: Task, tree: Path | None) -> EnvRecipe | None:
    """The language's recipe of a non-Python row; None for a Python row, a row without ``language`` or
    one of a language not built here (Go, Rust... run on their images)."""
    extra = task.model_extra or {}
    name = lang.of_row(extra)
    if name == "python" or not lang.known(name):
        return None
    language = lang.get(name)
    if language.recipe is None:
        return None
    return language.recipe({**extra, "created_at": task.created_at}, tree, f"instance {task.instance_id}")
