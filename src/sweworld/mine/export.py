"""Mined (or any recipe-built) instances as SWE-rebench rows: ``sweworld export swerebench``.

A row keeps every SWE-bench field and the provenance of the mined row, drops sweworld's own
environment fields and carries instead (``envs.rebench.to_row``):

- ``install_config``: the recipe that built the environment, in SWE-rebench's keys: ``python``;
  ``packages: requirements.txt`` with ``reqs_path`` (the requirement files the recipe read from the
  tree, when it read one); ``pip_packages``; ``pre_install``; ``install`` (the recipe's; the
  default recipe's editable install without dependencies, which the frozen requirements bring);
  ``test_cmd``; ``log_parser`` (the parser sweworld grades the row with: the same verdicts); ``env_vars``.
- ``requirements``: ``python -m pip freeze --all`` run in an episode of the built environment (a
  real episode on the real backend), without the project's own editable install; ``--all`` keeps
  pip, setuptools and wheel, so a rebuild gets the packaging tools the build had.
- ``environment_setup_commit`` (kept), ``FAIL_TO_PASS``/``PASS_TO_PASS``, ``docker_image`` and
  ``image_name`` (SWE-rebench's names), and ``meta`` (``has_test_patch``, ``num_modified_files``,
  where the row comes from).

Loaded back, ``envs/recipes/swerebench.py`` builds the environment from the frozen requirements
(``--no-deps``) and grades with the named parser. An instance that cannot be exported (its
environment does not build, ``pip freeze`` fails) is one error naming it; the others are written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweworld.core.errors import EnvBuildError, SWEWorldError
from sweworld.core.types import Task
from sweworld.envs.rebench import LOCALE, to_row
from sweworld.envs.recipes.model import DEFAULT_INSTALL, EnvRecipe

log = logging.getLogger(__name__)

FREEZE = "python -m pip freeze --all"
FREEZE_TIMEOUT = 300.0


@dataclass
class ExportSummary:
    """What an export wrote and which instances failed (id -> the error's first line)."""

    rows: int = 0
    failed: dict[str, str] = field(default_factory=dict)


def own_line(line: str, repo: str) -> bool:
    """A ``pip freeze`` line of the project itself (an editable or local install), not a requirement."""
    name = repo.rsplit("/", 1)[-1].lower().replace("_", "-")
    text = line.strip()
    return text.startswith(("-e ", "--editable")) or " @ file:" in text or text.lower().replace("_", "-").startswith(
        (f"{name}==", f"{name} @"))


def frozen_requirements(backend: Any, task: Task, *, timeout: float = FREEZE_TIMEOUT) -> str:
    """``pip freeze --all`` of ``task``'s built environment, run in a real episode of ``backend``."""
    with backend.open(task, timeout=timeout, label=f"{task.instance_id} freeze") as episode:
        result = episode.run(FREEZE, cwd="/testbed")
    if result.exit_code != 0:
        raise EnvBuildError(f"`{FREEZE}` exited with status {result.exit_code}: {result.output.strip()[-500:]}",
                            where=f"instance {task.instance_id}",
                            hint="check that the environment builds: sweworld env build --dataset FILE")
    lines = [line.strip() for line in result.output.splitlines() if line.strip() and not line.startswith("#")]
    return "\n".join(line for line in lines if not own_line(line, task.repo)) + "\n"


def install_config(task: Task, recipe: EnvRecipe) -> dict[str, Any]:
    """``recipe`` (``task``'s) in SWE-rebench's ``install_config`` keys."""
    from sweworld.harness.grade import log_parser_of

    env_vars = {k: v for k, v in recipe.env_vars.items() if LOCALE.get(k) != v}
    named = task.packages if task.packages and task.packages.endswith((".txt", ".in")) else None
    reqs = list(recipe.requirements_files) or ([named] if named else [])
    return {"python": recipe.python, "packages": "requirements.txt", "reqs_path": reqs or None,
            "env_yml_path": None, "pre_install": list(recipe.pre_install) or None,
            "install": recipe.install or DEFAULT_INSTALL, "pip_packages": list(recipe.pip_packages) or None,
            "no_use_env": None, "env_vars": env_vars or None, "test_cmd": recipe.test_cmd,
            "log_parser": log_parser_of(task).__name__}


def meta(task: Task) -> dict[str, Any]:
    """SWE-rebench's ``meta`` keys that a mined row can fill, and where the row comes from."""
    extra = task.model_extra or {}
    files = task.patch.count("diff --git ")
    return {"has_test_patch": bool(task.test_patch.strip()), "num_modified_files": files,
            "source": "sweworld mine" if extra.get("mined_from") else "sweworld",
            **{k: extra[k] for k in ("mined_from", "recipe_source", "statement_source") if k in extra}}


def rebench_row(task: Task, backend: Any, *, timeout: float = FREEZE_TIMEOUT) -> dict[str, Any]:
    """``task`` as a SWE-rebench row, its ``requirements`` frozen from its built environment."""
    recipe = backend.builder.recipe(task)
    frozen = frozen_requirements(backend, task, timeout=timeout)
    row = to_row(task, install_config(task, recipe), requirements=frozen)
    row["meta"] = meta(task)
    return row


def export_rebench(tasks: Iterable[Task], out: Path, backend: Any, *, timeout: float = FREEZE_TIMEOUT,
                   on_item: Callable[[str, str | None], None] | None = None) -> ExportSummary:
    """Write ``tasks`` as SWE-rebench rows to ``out`` (JSONL, one row flushed at a time); a task that
    fails is reported (``on_item(id, error)``) and skipped, the others are written."""
    summary = ExportSummary()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for task in tasks:
            try:
                row = rebench_row(task, backend, timeout=timeout)
            except SWEWorldError as exc:
                summary.failed[task.instance_id] = str(exc).splitlines()[0]
                log.warning("%s: not exported: %s", task.instance_id, exc)
                if on_item:
                    on_item(task.instance_id, summary.failed[task.instance_id])
                continue
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            summary.rows += 1
            if on_item:
                on_item(task.instance_id, None)
    return summary
