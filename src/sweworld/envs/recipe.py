"""``sweworld.envs.recipe``: an alias of ``sweworld.envs.recipes`` (the model, one module per source,
the ordered resolver), kept for the names imported from here."""

from __future__ import annotations

from sweworld.envs.recipes import *  # noqa: F403  (every public name of the package, under its old path)
from sweworld.envs.recipes import __all__  # noqa: F401
