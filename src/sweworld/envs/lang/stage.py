"""The env stage of another language than Python (``envs.lang``), beside ``envs.build``'s virtualenv:
the language's toolchain found here and its script, run by ``envs.build`` with the network in the
tree at the env commit; what episodes need is left under the environment's ``venv`` directory
(shared read-only by them)."""

from __future__ import annotations

import sys

from sweworld.core.errors import EnvBuildError
from sweworld.envs import lang
from sweworld.envs.discovery import find_interpreter
from sweworld.envs.recipes.model import EnvRecipe


def env_stage(recipe: EnvRecipe, where: str, *, venv: str, workdir: str) -> tuple[str, list[str], dict[str, str]]:
    """(script, read-only host paths the build needs, what env.json records: the toolchain and the
    Python interpreter, sweworld's own: the sandbox needs one, it runs nothing of the project)."""
    language = lang.get(recipe.language, where)
    if language.toolchain is None or language.env_script is None:
        raise EnvBuildError(f"environments of {recipe.language} are not built here yet", where=where,
                            hint="run the row on its container image (--env-source image)")
    tools = language.toolchain(where)
    interp = find_interpreter(f"{sys.version_info[0]}.{sys.version_info[1]}")
    return (language.env_script(recipe, tools, venv, workdir), [str(interp.prefix), *tools.ro_paths],
            {"python": interp.version, "interpreter": str(interp.path), "toolchain": f"{tools.name} {tools.version}"})
