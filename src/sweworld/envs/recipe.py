"""What an environment needs: the install recipe of a task, and the keys that cache its builds.

``resolve_recipe`` decides, first match wins: (a) the task's own environment fields, (b) a
SWE-rebench row's ``install_config`` (``envs/rebench.py``), (c) the swebench spec for (repo,
version), (d) SWE-Gym's spec for it, (e) a default read from the tree at the env commit. conda-based
steps are translated to virtualenv builds; everything translated or dropped is kept in ``notes``.

Two stages: the ENV stage (venv + dependencies; shared by every task with the same ``env_key``) and
the INSTANCE stage (``pre_install`` then ``install``, once per base commit; ``instance_key``).
"""

from __future__ import annotations

import configparser
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from sweworld.envs import swebench_specs as sbs
from sweworld.envs import swegym_installs, swegym_specs
from sweworld.envs.era import SWEBENCH_ERA_DATE, era_constraints, era_seeds
from sweworld.envs.services import stand_ins
from sweworld.errors import EnvBuildError
from sweworld.types import Task

ENV_KEY_VERSION = 2
"""Bump when the env-stage script changes in a way that invalidates built environments."""
DEFAULT_PYTHON = "3.11"
DEFAULT_TEST_CMD = "pytest -rA"
DEFAULT_INSTALL = "python -m pip install --no-deps -e ."
DEFAULT_EXTRAS = ("test", "tests", "testing", "dev")


class EnvRecipe(BaseModel):
    """How to build the environment of a task (env stage) and install its repo (instance stage)."""

    python: str = Field(default=DEFAULT_PYTHON, description="Python version 'X.Y' of the virtualenv.")
    seed_packages: list[str] = Field(default_factory=list, description=(
        "Env stage: packaging tools pinned right after the venv is created (pip, setuptools, wheel of "
        "the era of SWE-bench's images for swebench specs, see envs/era.py); [] keeps the venv's own."))
    exclude_newer: str | None = Field(default=None, description=(
        "Resolve unpinned requirements as of this date (uv's --exclude-newer; for swebench specs the era "
        "of SWE-bench's images, see envs/era.py); None: the newest."))
    constraints: list[str] = Field(default_factory=list, description=(
        "Requirement constraints every install of both stages obeys (PIP_CONSTRAINT and UV_CONSTRAINT), "
        "e.g. 'docutils<0.21' where SWE-bench's images measurably had an older release; see envs/era.py."))
    packages: list[str] = Field(default_factory=list, description=(
        "Env stage: pip requirement lines installed first, in one resolver call (conda package lists "
        "and requirement files already translated)."))
    requirements_files: list[str] = Field(
        default_factory=list,
        description="Env stage: candidate requirement files inside the tree, the first existing one "
                    "installed with -r (used when the tree was not available to read them).")
    optional_packages: list[str] = Field(
        default_factory=list,
        description="Env stage: best-effort requirements (conda deps of an environment.yml); tried "
                    "together, then one by one, failures logged and skipped.")
    packages_frozen: bool = Field(
        default=False, description="Env stage: `packages` is a complete frozen set (a `pip freeze`), installed "
                                   "as it is, without resolving (--no-deps): a freeze may pin what a resolver refuses.")
    pip_packages: list[str] = Field(default_factory=list, description="Env stage: installed after `packages`.")
    install_repo_in_env: bool = Field(
        default=False,
        description="Env stage: install the repo itself (editable, with `install_extras`) at the env "
                    "commit so that its dependencies come in (default recipe).")
    install_extras: list[str] = Field(
        default_factory=list, description="Extras of the env-stage repo install, e.g. ['test'].")
    pre_install: list[str] = Field(
        default_factory=list, description="Instance stage: shell commands run in the tree before install.")
    install: str | None = Field(
        default=None, description="Instance stage: command installing the repo, e.g. 'python -m pip install -e .'.")
    test_cmd: str = Field(default=DEFAULT_TEST_CMD, description="Test command; test files are appended.")
    eval_commands: list[str] = Field(
        default_factory=list, description="Shell commands run before the tests (exports already moved to env_vars).")
    env_vars: dict[str, str] = Field(default_factory=dict, description="Environment variables for test runs.")
    services: list[str] = Field(default_factory=list, description=(
        "Local stand-ins started inside the episode for test runs (names from envs/services.py, e.g. "
        "'httpbin' for tests that call httpbin.org); the sandbox still reaches nothing outside."))
    source: Literal["task", "swerebench", "swebench", "swegym", "default"] = Field(
        default="default", description="Where it came from (swerebench: the row's install_config).")
    notes: list[str] = Field(default_factory=list, description="Everything translated, dropped or guessed.")

    @field_validator("python", mode="before")
    @classmethod
    def _major_minor(cls, value: Any) -> str:
        """'3.9', '3.9.18', 'python3.9' or 3.9 -> '3.9'."""
        match = re.search(r"(\d+)\.(\d+)", str(value))
        if not match:
            raise ValueError(f"python must look like 'X.Y', got {value!r}")
        return f"{match.group(1)}.{match.group(2)}"

    def commits_setup(self) -> bool:
        """Whether its install layer commits the tree as the set-up left it, as the images of its
        source do (SWE-bench's: a commit "SWE-bench" on the base commit; envs/build.py)."""
        return self.source == "swebench"

    def env_stage_fields(self) -> dict[str, Any]:
        """The fields that decide the env stage (and only those; ``constraints`` and ``packages_frozen``
        only when set, so that adding them kept every existing key)."""
        fields = self.model_dump(include={"python", "seed_packages", "exclude_newer", "packages", "requirements_files",
                                          "optional_packages", "pip_packages", "install_repo_in_env", "install_extras",
                                          "constraints", "packages_frozen"})
        for key in ("constraints", "packages_frozen"):  # only when set, so that adding them kept every key
            if not fields[key]:
                del fields[key]
        return fields


def pinned_by_version(recipe: EnvRecipe) -> bool:
    """Whether ``recipe``'s env stage is decided by its content alone (a published spec, or a
    SWE-rebench row whose requirements were read or frozen), so that its environment is keyed by
    the task's ``version`` rather than by the env commit."""
    if recipe.source in ("swebench", "swegym"):
        return True
    return recipe.source == "swerebench" and not recipe.requirements_files and not recipe.install_repo_in_env


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def env_key(recipe: EnvRecipe, repo: str, env_commit_or_version: str) -> str:
    """Short content hash of (python, env-stage recipe, repo, env commit or version)."""
    return _digest({"v": ENV_KEY_VERSION, "repo": repo, "env": env_commit_or_version,
                    **recipe.env_stage_fields()})


def instance_key(env_key: str, base_commit: str, recipe: EnvRecipe) -> str:
    """Short content hash of the instance stage: env key, base commit, pre_install and install."""
    return _digest({"v": ENV_KEY_VERSION, "env_key": env_key, "base": base_commit,
                    "pre_install": recipe.pre_install, "install": recipe.install})


# --- (c) default recipe read from the tree ------------------------------------------------------

def _norm_extra(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except tomllib.TOMLDecodeError:
        return {}


def read_extras(tree: Path) -> tuple[set[str], str | None]:
    """(extras declared by the project, requires-python) from pyproject.toml, setup.cfg, setup.py."""
    extras: set[str] = set()
    requires: str | None = None
    pyproject = tree / "pyproject.toml"
    if pyproject.is_file():
        project = _load_toml(pyproject).get("project") or {}
        extras.update((project.get("optional-dependencies") or {}).keys())
        requires = project.get("requires-python")
    setup_cfg = tree / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg.read_text(encoding="utf-8", errors="replace"))
        except configparser.Error:
            parser.clear()
        if parser.has_section("options.extras_require"):
            extras.update(parser.options("options.extras_require"))
        if requires is None and parser.has_option("options", "python_requires"):
            requires = parser.get("options", "python_requires").strip()
    setup_py = tree / "setup.py"
    if setup_py.is_file():
        text = setup_py.read_text(encoding="utf-8", errors="replace")
        if "extras_require" in text:
            names = "|".join(DEFAULT_EXTRAS)
            extras.update(re.findall(rf"""['"]({names})['"]\s*:\s*[\[(]""", text))
        match = re.search(r"""python_requires\s*=\s*['"]([^'"]+)['"]""", text)
        if requires is None and match:
            requires = match.group(1)
    return extras, requires


def pick_python(requires_python: str | None, notes: list[str]) -> str:
    """DEFAULT_PYTHON when requires-python allows it (the most compatible choice for old releases),
    else the newest interpreter here (3.x) that it allows."""
    if not requires_python:
        notes.append(f"no requires-python: Python {DEFAULT_PYTHON}")
        return DEFAULT_PYTHON
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from sweworld.envs.discovery import find_interpreter, list_interpreters

    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        notes.append(f"requires-python '{requires_python}' not understood: Python {DEFAULT_PYTHON}")
        return DEFAULT_PYTHON
    try:
        if find_interpreter(DEFAULT_PYTHON).full_version in spec:
            notes.append(f"requires-python '{requires_python}': Python {DEFAULT_PYTHON}")
            return DEFAULT_PYTHON
    except EnvBuildError:
        pass
    allowed = [i for i in list_interpreters() if i.version_tuple >= (3, 0) and i.full_version in spec]
    if not allowed:
        notes.append(f"no interpreter here satisfies requires-python '{requires_python}': "
                     f"Python {DEFAULT_PYTHON}")
        return DEFAULT_PYTHON
    best = allowed[-1].version
    notes.append(f"requires-python '{requires_python}': Python {best}")
    return best


def default_recipe(tree: Path | None) -> EnvRecipe:
    """``pip install -e .[test extras]`` at the env commit plus pytest; Python from requires-python."""
    notes: list[str] = []
    if tree is None:
        notes.append(f"no tree to read: no extras, Python {DEFAULT_PYTHON}")
        extras, requires = set(), None
    else:
        extras, requires = read_extras(tree)
    present = {_norm_extra(e): e for e in extras}
    chosen = [present[_norm_extra(n)] for n in DEFAULT_EXTRAS if _norm_extra(n) in present]
    chosen = list(dict.fromkeys(chosen))
    notes.append(f"default recipe: editable install with extras {chosen} plus pytest")
    return EnvRecipe(python=pick_python(requires, notes) if tree is not None else DEFAULT_PYTHON,
                     packages=["pytest"], install_repo_in_env=True, install_extras=chosen,
                     install=DEFAULT_INSTALL, test_cmd=DEFAULT_TEST_CMD, source="default", notes=notes)


# --- translation of swebench-style fields -------------------------------------------------------

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


def from_task(task: Task, tree: Path | None) -> EnvRecipe:
    """The task's own fields; missing python/install/test_cmd come from the default recipe."""
    notes: list[str] = []
    fields = _packages(task.packages, task.repo, tree, notes)
    base = default_recipe(tree) if (task.python is None or task.install is None) else None
    if base is not None:
        filled = [n for n in ("python", "install") if getattr(task, n) is None]
        notes.append(f"task fields used; {', '.join(filled)} from the default recipe")
        notes.extend(base.notes)
    recipe = EnvRecipe(python=task.python or base.python, **fields, pip_packages=list(task.pip_packages or []),
                       pre_install=sbs.drop_system_commands(list(task.pre_install or []), "pre_install", notes),
                       install=task.install, test_cmd=task.test_cmd or DEFAULT_TEST_CMD, source="task",
                       exclude_newer=task.exclude_newer, notes=notes)
    if task.install is None:  # the default install: deps in the env stage, --no-deps per instance
        recipe.install = DEFAULT_INSTALL
        recipe.install_repo_in_env = True
        recipe.install_extras = base.install_extras
        if not recipe.packages and not recipe.requirements_files:
            recipe.packages = ["pytest"]
    if task.test_cmd is None:
        notes.append(f"test_cmd defaults to '{DEFAULT_TEST_CMD}'")
    return recipe


def resolve_recipe(task: Task, tree: Path | None) -> EnvRecipe:
    """The recipe for a task; ``tree`` is the repository checked out at the env commit (or None).

    First match wins: the task's own fields (when it sets any of install, python, test_cmd,
    packages, pip_packages, pre_install), then a SWE-rebench row's ``install_config`` (with its
    frozen ``requirements``/``environment``), then the swebench spec for (task.repo, task.version),
    then SWE-Gym's published spec for it (``envs/swegym_specs.py``), then the default read from the tree.
    """
    own = (task.install, task.python, task.test_cmd, task.packages, task.pip_packages, task.pre_install)
    if any(value is not None for value in own):
        return from_task(task, tree)
    extra = task.model_extra or {}
    if extra.get("install_config"):
        from sweworld.envs.rebench import from_install_config
        return from_install_config(extra, task.repo, tree, instance_id=task.instance_id)
    spec = sbs.spec_for(task.repo, task.version)
    if spec is not None:
        return from_spec(spec, task.repo, tree, None if task.version is None else str(task.version))
    spec = swegym_specs.spec_for(task.repo, task.version)
    if spec is not None:
        return from_spec(spec, task.repo, tree, str(task.version), source="swegym")
    return default_recipe(tree)
