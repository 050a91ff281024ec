"""The env stage of another language than Python (``envs.lang``), beside ``envs.build``'s virtualenv:
the language's toolchain found here, its script run with the network in the tree at the env commit,
what episodes need left under the environment's ``venv`` directory (shared read-only by them)."""

from __future__ import annotations

import sys
from pathlib import Path

from sweworld.core.errors import EnvBuildError
from sweworld.envs import lang
from sweworld.envs.discovery import find_interpreter
from sweworld.envs.recipes.model import EnvRecipe
from sweworld.envs.store import envs_root
from sweworld.sandbox import Dir, Layers


def build_env(recipe: EnvRecipe, key: str, final: Path, where: str, *, tree: Path, base_commit: str, meta: dict,
              timeout: float) -> None:
    """Build and publish at ``final`` the environment of ``recipe`` (its ``language``); the Python
    interpreter on record is sweworld's own (the sandbox needs one; it runs nothing of the project)."""
    from sweworld.envs.build import VENV, StagedBuild, _ro_paths

    language = lang.get(recipe.language, where)
    if language.toolchain is None or language.env_script is None:
        raise EnvBuildError(f"environments of {recipe.language} are not built here yet", where=where,
                            hint="run the row on its container image (--env-source image)")
    tools = language.toolchain(where)
    interp = find_interpreter(f"{sys.version_info[0]}.{sys.version_info[1]}")
    build = StagedBuild(final.parent / f".{key}.building", final, envs_root() / "logs" / f"{key}.log", where)
    (build.staging / "venv").mkdir()
    mounts = {VENV: Dir(build.staging / "venv", writable=True), "/testbed": Layers([tree])}
    build.run(mounts, language.env_script(recipe, tools, VENV, "/testbed"), "environment build",
              base_commit=base_commit, ro_paths=[*_ro_paths(interp), *tools.ro_paths], timeout=timeout)
    build.publish("env.json", {"key": key, **meta, "python": interp.version, "interpreter": str(interp.path),
                               "toolchain": f"{tools.name} {tools.version}", "recipe": recipe.model_dump()})
