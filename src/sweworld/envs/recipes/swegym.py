"""The source of SWE-Gym's published specs (``envs/swegym_specs.py``), in swebench's shape."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.envs import swegym_specs
from sweworld.envs.recipes.swebench import from_spec

if TYPE_CHECKING:
    from sweworld.core.types import Task
    from sweworld.envs.recipes.model import EnvRecipe


def recipe(task: Task, tree: Path | None) -> EnvRecipe | None:
    """SWE-Gym's spec for (repo, version); None when it has none."""
    spec = swegym_specs.spec_for(task.repo, task.version)
    return None if spec is None else from_spec(spec, task.repo, tree, str(task.version), source="swegym")
