"""What a language plugs into: path rules for mining, detection, inference of a recipe from the tree,
the env and instance stages of its environment, and the parser of its test output.

A language is one ``Language`` value in its own module (``python``, ``javascript``; Go and Rust
next), listed in ``envs.lang.LANGUAGES``. Everything language-specific that ``mine`` and ``envs``
need goes through it; what is common (the sandbox, the layers, the harness, grading by a
``swebench.harness.log_parsers`` parser named on the row) stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweworld.envs.recipes.model import EnvRecipe


@dataclass(frozen=True)
class PathRules:
    """How the files of a commit divide for mining (``mine.rules.skip_reason``, ``mine.split``)."""

    is_test: Callable[[str], bool]
    """Test files and everything under a test directory (data included): the test patch."""
    is_doc: Callable[[str], bool]
    is_source: Callable[[str], bool]
    """Non-test, non-doc code of the language: a candidate changes some."""
    is_vendored: Callable[[str], bool]
    is_generated: Callable[[str], bool]


@dataclass(frozen=True)
class Toolchain:
    """A language's tools found on this machine, as an env stage needs them."""

    name: str
    version: str
    programs: dict[str, str]
    """Program name -> its real path on this machine (``node`` -> ``/usr/bin/node``)."""
    ro_paths: tuple[str, ...] = ()
    """Host directories the build sandbox must see read-only (none when under /usr)."""


@dataclass(frozen=True)
class Language:
    """One language (see the module docstring). ``infer`` is None for Python, whose inference needs
    the interpreters found here (``mine.recipes.infer``)."""

    name: str
    paths: PathRules
    detect: Callable[[Path], bool]
    """Whether the tree (a checkout of the repository) is a project of this language."""
    infer: Callable[[Path, str], tuple[dict[str, Any], list[str]]] | None = None
    """(row fields, notes) of the environment read from the tree at the env commit of ``env_date``:
    ``language`` and an ``install_config`` (``install``, ``test_cmd``, ``log_parser``), as
    SWE-rebench V2's rows carry them. Raises ``EnvBuildError`` with the reason when it cannot."""
    recipe: Callable[[dict[str, Any], Path | None, str], EnvRecipe] | None = None
    """The ``EnvRecipe`` of a row of this language (its extra fields, the tree at the env commit or
    None, where to name in errors)."""
    env_script: Callable[[EnvRecipe, Toolchain, str, str], str] | None = None
    """The env-stage script (recipe, toolchain, venv, workdir): run with the network in the tree at the
    env commit; what episodes need goes under the venv directory (shared read-only)."""
    instance_lines: Callable[[EnvRecipe, str], list[str]] | None = None
    """Lines run first in the instance stage (recipe, venv), e.g. linking the dependencies into the tree."""
    toolchain: Callable[[str], Toolchain] | None = None
    """The toolchain found on PATH (argument: where, for the error); ``EnvBuildError`` naming what to
    install when absent."""
    read_version: Callable[[Path, str], tuple[str | None, str]] | None = None
    """(``X.Y`` or None, where) of a commit (mirror, sha), as ``mine.version.read_version`` for Python."""
    notes: list[str] = field(default_factory=list)


def parts(path: str) -> tuple[str, ...]:
    return PurePosixPath(path).parts


def under(path: str, dirs: frozenset[str]) -> bool:
    """Whether a directory of ``path`` (not its file name) is one of ``dirs`` (lower case)."""
    return any(p.lower() in dirs for p in parts(path)[:-1])


def row_config(row: dict[str, Any], tree: Path | None, where: str, language: str,
               infer: Callable[[Path, str], tuple[dict[str, Any], list[str]]]) -> tuple[dict[str, Any], list[str], str, bool]:
    """(install_config, notes, test command, run whole) of a row of ``language``: its ``install_config``,
    what it lacks inferred from ``tree`` (the env commit's; ``EnvBuildError`` without one); a
    ``test_cmd`` list, or one without ``append_test_files``, is run whole (SWE-rebench V2's rows)."""
    from sweworld.core.errors import EnvBuildError
    from sweworld.core.types import install_config_of

    config = dict(install_config_of(row) or {})
    notes = [f"recipe: the row's install_config ({language})"]
    if not config.get("install"):
        if tree is None:
            raise EnvBuildError(f"a {language} row without install_config.install needs the tree to infer it",
                                where=where, hint="resolve the recipe with the tree at the environment commit")
        fields, inferred = infer(tree, str(row.get("created_at") or "")[:10] or "2100-01-01")
        config = {**fields["install_config"], **{k: v for k, v in config.items() if v}}
        notes += inferred
    test_cmd = config.get("test_cmd") or ""
    whole = isinstance(test_cmd, list) or not config.get("append_test_files")
    if isinstance(test_cmd, list):
        test_cmd = " && ".join(str(c) for c in test_cmd)
    return config, notes, str(test_cmd), whole
