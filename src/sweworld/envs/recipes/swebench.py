"""The source of SWE-bench's and SWE-Gym's specs (they share the shape): a spec dict as a recipe."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from sweworld.core.types import Task
from sweworld.envs import swebench_specs as sbs
from sweworld.envs import swegym_installs
from sweworld.envs.era import SWEBENCH_ERA_DATE, era_constraints, era_seeds
from sweworld.envs.recipes.model import (
    DEFAULT_PYTHON,
    DEFAULT_TEST_CMD,
    EnvRecipe,
)
from sweworld.envs.recipes.packages import _packages
from sweworld.envs.services import stand_ins


def _test_cmd(value: Any) -> str:
    return " && ".join(value) if isinstance(value, list) else (value or DEFAULT_TEST_CMD)


def from_spec(spec: dict[str, Any], repo: str, tree: Path | None, version: str | None = None, *,
              source: Literal["swebench", "swegym"] = "swebench") -> EnvRecipe:
    """Translate a swebench-style spec dict (of ``repo`` at release line ``version``; swebench's or
    SWE-Gym's, which share the shape) into an EnvRecipe."""
    notes: list[str] = []
    fields = _packages(spec.get("packages"), repo, tree, notes, source, list(spec.get("env_patches") or []))
    if spec.get("no_use_env"):
        notes.append("no_use_env: conda env created first, then updated from the yml (same result here)")
    for key, why in sbs.IGNORED_KEYS.items():
        if key in spec:
            notes.append(f"ignored spec key '{key}': {why}")
    env_vars: dict[str, str] = {str(k): str(v) for k, v in (spec.get("env_vars_test") or {}).items()}
    evals = list(spec.get("eval_commands") or [])
    evals = sbs.split_exports(sbs.drop_system_commands(evals, "eval_commands", notes), env_vars)
    if any(k in ("LANG", "LC_ALL") for k in env_vars):
        notes.append("eval exports a locale (LANG/LC_ALL): it must exist on the host (`locale -a`); "
                     "C.UTF-8 is the usual substitute")
    pre = sbs.drop_system_commands(list(spec.get("pre_install") or []), "pre_install", notes)
    pre, install = swegym_installs.translate(pre, spec.get("install"), notes)
    python = str(spec.get("python") or DEFAULT_PYTHON)
    seeds = era_seeds(python)
    if seeds:
        notes.append(f"venv seeded with {' '.join(seeds)}; unpinned requirements as of {SWEBENCH_ERA_DATE} "
                     "(the era of SWE-bench's images)")
    services = stand_ins(repo)
    if services:
        notes.append(f"local stand-ins for test runs: {', '.join(services)}")
    constraints = era_constraints(repo, version)
    if constraints:
        notes.append(f"constrained to {' '.join(constraints)} (what SWE-bench's images measurably had; envs/era.py)")
    return EnvRecipe(python=python, seed_packages=seeds, exclude_newer=SWEBENCH_ERA_DATE if seeds else None,
                     constraints=constraints, services=services, **fields,
                     pip_packages=list(spec.get("pip_packages") or []),
                     pre_install=pre, install=install, test_cmd=_test_cmd(spec.get("test_cmd")),
                     eval_commands=evals, env_vars=env_vars, source=source, notes=notes)


def recipe(task: Task, tree: Path | None) -> EnvRecipe | None:
    """swebench's spec for (repo, version); None when it has none."""
    spec = sbs.spec_for(task.repo, task.version)
    return None if spec is None else from_spec(spec, task.repo, tree, None if task.version is None else str(task.version))
