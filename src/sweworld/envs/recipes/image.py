"""The recipe of an environment that is a container image: nothing is installed, only how its tests run.

The first that answers:

1. the row's ``install_config`` (SWE-rebench's rows, V1 and V2): its ``test_cmd``, a string or a
   list of commands run in order; its ``log_parser`` is read by the grader (``harness.grade``). A
   Python row's single command gets the test files appended, as SWE-rebench's harness does; a list,
   or a row of another ``language``, is run whole;
2. swebench's spec of the row's repository and version: for Python, the steps of SWE-bench's eval
   script in its images (activate conda's ``testbed`` where the image has conda, the spec's
   ``eval_commands``, then its ``install``: SWE-bench reinstalls on every evaluation), then
   ``test_cmd`` with the test files; for the other languages (C, Go, Java, JavaScript/TypeScript,
   PHP, Ruby, Rust) the spec's ``build`` commands then its ``test_cmd`` list, whole, as
   ``make_eval_script_list_common`` runs them after the test patch;
3. else ``pytest -rA`` on the test files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sweworld.core.types import install_config_of
from sweworld.envs.recipes.model import DEFAULT_TEST_CMD, EnvRecipe

if TYPE_CHECKING:
    from sweworld.core.types import Task

CONDA_ACTIVATE = "/opt/miniconda3/bin/activate"
"""Where SWE-bench's images keep conda (its ``testbed`` environment holds the instance's packages)."""
PYTHON_LANGUAGES = ("", "python", "py", "python3")


def _commands(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(v) for v in value or [] if str(v).strip()]


def _language(task: Task) -> str:
    return str((task.model_extra or {}).get("language") or "").strip().lower()


def from_row(task: Task) -> EnvRecipe | None:
    config = install_config_of(task.model_extra or {})
    if not config or not config.get("test_cmd"):
        return None
    commands = _commands(config["test_cmd"])
    whole = isinstance(config["test_cmd"], list) or _language(task) not in PYTHON_LANGUAGES
    return EnvRecipe(test_cmd="\n".join(commands), directives=not whole, source="image",
                     notes=["recipe: the image, tests run by the row's install_config.test_cmd"])


def from_spec(task: Task, *, conda: bool) -> EnvRecipe | None:
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS

    spec = MAP_REPO_VERSION_TO_SPECS.get(task.repo, {}).get(str(task.version or ""))
    if spec is None:
        return None
    notes = [f"recipe: the image, tests run by swebench's spec of {task.repo} {task.version}"]
    if "python" in spec:  # SWE-bench's Python images: conda's testbed environment
        activate = [f"source {CONDA_ACTIVATE}", "conda activate testbed"] if conda else []
        return EnvRecipe(python=spec["python"], test_cmd=str(spec["test_cmd"]), source="image", notes=notes,
                         eval_commands=[*activate, *_commands(spec.get("eval_commands")),
                                        *_commands(spec.get("install"))])
    return EnvRecipe(test_cmd="\n".join([*_commands(spec.get("build")), *_commands(spec["test_cmd"])]),
                     directives=False, source="image", notes=notes)


def image_recipe(task: Task, *, conda: bool = False) -> EnvRecipe:
    """How ``task``'s tests run in its image; ``conda``: the image has SWE-bench's conda
    (``CONDA_ACTIVATE``)."""
    return (from_row(task) or from_spec(task, conda=conda)
            or EnvRecipe(test_cmd=DEFAULT_TEST_CMD, source="image",
                         notes=["recipe: the image; no test command in the row or in swebench's specs: "
                                f"{DEFAULT_TEST_CMD}"]))
