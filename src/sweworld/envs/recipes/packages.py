"""What a spec's or a task's ``packages`` names, as pip installs it: a conda yml or a requirements
file of the tree (patched as the spec says), or conda packages translated to pip."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Literal

from sweworld.core.errors import EnvBuildError
from sweworld.envs import swebench_specs as sbs
from sweworld.envs import swegym_specs


def _spec_paths(repo: str, source: str, kind: Literal["yml", "reqs"]) -> list[str]:
    """Where the spec table of ``source`` looks for ``packages: environment.yml`` /
    ``requirements.txt`` of ``repo`` (SWE-Gym's own map for its specs: modin's is environment-dev.yml)."""
    if source == "swegym":
        table = swegym_specs.ENV_YML_PATHS if kind == "yml" else swegym_specs.REQS_PATHS
        key = next((name for name in table if name.lower() == repo.lower()), None)
        if key is not None:
            return list(table[key])
    return sbs.env_yml_paths(repo) if kind == "yml" else sbs.reqs_paths(repo)


def _patched_yml(found: Path, patches: list[str], notes: list[str]) -> Path:
    """A copy of ``found`` named ``environment.yml`` in a directory of its own, after the spec's
    ``env_patches`` (shell commands SWE-Gym's harness runs on the file before ``conda env create``,
    e.g. dask's ``sed`` that deletes the GitHub-only pip section) ran on it there."""
    work = Path(tempfile.mkdtemp(prefix="sweworld-yml-"))
    target = work / "environment.yml"
    shutil.copyfile(found, target)
    for patch in patches:
        proc = subprocess.run(["bash", "-c", patch], cwd=work, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise EnvBuildError(f"env_patches command `{patch}` failed on {found.name}: {proc.stderr.strip()[-300:]}")
        notes.append(f"env_patches `{patch}` applied to {found.name}")
    return target


def _packages(value: str | None, repo: str, tree: Path | None, notes: list[str],
              source: str = "swebench", patches: list[str] | None = None) -> dict[str, Any]:
    """Normalise a 'packages' field: conda package list, requirements file or environment.yml
    (``patches``: the spec's ``env_patches``, run on a copy of the yml before it is read)."""
    if not value or not value.strip():
        return {}
    value = value.strip()
    if value.endswith((".yml", ".yaml")):
        candidates = _spec_paths(repo, source, "yml") if value == "environment.yml" else []
        candidates = candidates or [value]
        if tree is None:
            raise EnvBuildError(f"{repo}: packages '{value}' must be read from the tree at the env commit",
                                hint="call resolve_recipe(task, tree) with the checked-out tree")
        found = sbs.first_existing(tree, candidates)
        if found is None:
            raise EnvBuildError(f"{repo}: no environment file at {candidates} in {tree}")
        if patches:
            patched = _patched_yml(found, patches, notes)
            try:
                pip_reqs, conda_reqs = sbs.read_environment_yml(patched, patched.parent, notes)
            finally:
                shutil.rmtree(patched.parent, ignore_errors=True)
        else:
            pip_reqs, conda_reqs = sbs.read_environment_yml(found, tree, notes)
        return {"packages": pip_reqs, "optional_packages": conda_reqs}
    if value.endswith(".txt") or value == "requirements":
        candidates = (_spec_paths(repo, source, "reqs") if value == "requirements.txt" else []) or [value]
        if tree is None:
            notes.append(f"requirements {candidates} installed from the tree with -r (not read here)")
            return {"requirements_files": candidates}
        found = sbs.first_existing(tree, candidates)
        if found is None:
            raise EnvBuildError(f"{repo}: no requirements file at {candidates} in {tree}",
                                hint="check environment_setup_commit, or set 'packages' on the task")
        notes.append(f"requirements read from {found.relative_to(tree)}")
        return {"packages": sbs.read_requirements(found, tree, notes)}
    reqs, conda_notes = sbs.conda_packages_to_pip(value)
    notes.extend(conda_notes)
    notes.append(f"conda packages '{value}' installed with pip as {reqs}")
    return {"packages": reqs}
