"""What an environment needs: the install recipe of a task, from the first of its sources that answers.

``model`` (``EnvRecipe`` and the keys that cache its builds), one module per source (``task``,
``swerebench``, ``swebench``, ``swegym``, ``default``) and the ordered resolver (``resolve``).
conda-based steps are translated to virtualenv builds; everything translated or dropped is kept in
``notes``.
"""

from __future__ import annotations

from sweworld.envs.recipes.default import default_recipe, pick_python, read_extras
from sweworld.envs.recipes.model import (
    DEFAULT_EXTRAS,
    DEFAULT_INSTALL,
    DEFAULT_PYTHON,
    DEFAULT_TEST_CMD,
    ENV_KEY_VERSION,
    EnvRecipe,
    env_key,
    instance_key,
    pinned_by_version,
)
from sweworld.envs.recipes.resolve import SOURCES, resolve_recipe
from sweworld.envs.recipes.swebench import from_spec
from sweworld.envs.recipes.task import from_task

__all__ = ["DEFAULT_EXTRAS", "DEFAULT_INSTALL", "DEFAULT_PYTHON", "DEFAULT_TEST_CMD", "ENV_KEY_VERSION", "SOURCES",
           "EnvRecipe", "default_recipe", "env_key", "from_spec", "from_task", "instance_key", "pick_python",
           "pinned_by_version", "read_extras", "resolve_recipe"]
