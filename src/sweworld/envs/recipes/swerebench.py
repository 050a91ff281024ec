"""The source of a SWE-rebench row: its ``install_config`` with its frozen ``requirements`` and
``environment`` (``envs/rebench.py`` reads them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.envs.rebench import from_install_config

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.envs.recipes.model import EnvRecipe


def recipe(task: Task, tree: Path | None) -> EnvRecipe | None:
    """The row's ``install_config`` as a recipe; None when the row has none."""
    extra = task.model_extra or {}
    if not extra.get("install_config"):
        return None
    return from_install_config(extra, task.repo, tree, instance_id=task.instance_id)
