"""The language layer: one module per language (``python``, ``javascript``; Go and Rust next).

A language (``base.Language``) gives mining its path rules (``paths``), says whether a tree is one
of its projects (``detect``), infers a row's environment from the tree (``infer``: ``language`` and
an ``install_config`` with ``install``, ``test_cmd`` and ``log_parser``, as SWE-rebench V2's rows),
turns such a row into an ``EnvRecipe`` (``recipe``), and writes its env and instance stages
(``env_script``, ``instance_lines``) with the toolchain found here (``toolchain``). Python is the
default and keeps its own stages (``envs.scripts``) and inference (``mine.recipes``).

Adding a language: a module defining a ``Language``, listed in ``LANGUAGES`` (detection order:
first match wins, Python first).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.core.errors import DatasetError
from sweworld.envs.lang.base import Language, PathRules, Toolchain
from sweworld.envs.lang.go import GO
from sweworld.envs.lang.javascript import JAVASCRIPT
from sweworld.envs.lang.python import PYTHON
from sweworld.envs.lang.rust import RUST

if TYPE_CHECKING:
    from sweworld.core.types import Task

LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (PYTHON, JAVASCRIPT, GO, RUST)}
ALIASES = {"": "python", "py": "python", "python3": "python", "js": "javascript", "typescript": "javascript",
           "ts": "javascript", "node": "javascript", "golang": "go", "rs": "rust"}


def get(name: str, where: str = "") -> Language:
    """The language ``name`` (aliases: ``ts``, ``typescript``, ``js``...); ``DatasetError`` when unknown."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in LANGUAGES:
        raise DatasetError(f"language {name!r} is not one sweworld builds environments for", where=where or None,
                           hint=f"one of {', '.join(LANGUAGES)}; or run the row on its container image")
    return LANGUAGES[key]


def known(name: str) -> bool:
    return ALIASES.get(name.strip().lower(), name.strip().lower()) in LANGUAGES


def detect(tree: Path) -> Language:
    """The language of the project at ``tree`` (Python when none says so)."""
    return next((lang for lang in LANGUAGES.values() if lang.detect(tree)), PYTHON)


def of_row(row: dict[str, Any]) -> str:
    """The row's ``language`` field, normalised (``python`` when it has none)."""
    name = str(row.get("language") or "").strip().lower()
    return ALIASES.get(name, name)


def builds(task: Task) -> bool:
    """Whether ``task`` is a row of a non-Python language whose environment is built here (it names
    how to install it: ``install_config.install``) rather than run on a container image."""
    from sweworld.core.types import install_config_of

    extra = task.model_extra or {}
    name = of_row(extra)
    return name != "python" and name in LANGUAGES and bool((install_config_of(extra) or {}).get("install"))


__all__ = ["LANGUAGES", "Language", "PathRules", "Toolchain", "builds", "detect", "get", "known", "of_row"]
