"""``sweworld.envs.recipe``: an alias of ``sweworld.envs.recipes`` (the model, one module per source,
the ordered resolver), kept for the names imported from here."""

from __future__ import annotations

from sweworld.envs.recipes import (
    DEFAULT_EXTRAS,
    DEFAULT_INSTALL,
    DEFAULT_PYTHON,
    DEFAULT_TEST_CMD,
    ENV_KEY_VERSION,
    SOURCES,
    EnvRecipe,
    default_recipe,
    env_key,
    from_spec,
    from_task,
    instance_key,
    pick_python,
    pinned_by_version,
    read_extras,
    resolve_recipe,
)

__all__ = ["DEFAULT_EXTRAS", "DEFAULT_INSTALL", "DEFAULT_PYTHON", "DEFAULT_TEST_CMD", "ENV_KEY_VERSION", "SOURCES",
           "EnvRecipe", "default_recipe", "env_key", "from_spec", "from_task", "instance_key", "pick_python",
           "pinned_by_version", "read_extras", "resolve_recipe"]
