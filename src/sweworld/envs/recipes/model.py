"""The recipe model: what an environment needs, and the keys that cache its builds (the ENV stage,
shared by every task with the same ``env_key``; the INSTANCE stage, once per base commit: ``instance_key``)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

ENV_KEY_VERSION = 2
"""Bump when the env-stage script changes in a way that invalidates built environments."""
DEFAULT_PYTHON = "3.11"
DEFAULT_TEST_CMD = "pytest -rA"
DEFAULT_INSTALL = "python -m pip install --no-deps -e ."
DEFAULT_EXTRAS = ("test", "tests", "testing", "dev")


class EnvRecipe(BaseModel):
    """How to build the environment of a task (env stage) and install its repo (instance stage)."""

    python: str = Field(default=DEFAULT_PYTHON, description="Python version 'X.Y' of the virtualenv.")
    language: str = Field(default="python", description=(
        "The project's language (envs/lang): another than python builds no virtualenv; its env stage "
        "runs `env_setup` with the language's toolchain (envs/lang/<language>.py)."))
    env_setup: list[str] = Field(default_factory=list, description=(
        "Env stage of a non-Python language: commands installing the dependencies in the tree at the env "
        "commit, with the network (e.g. 'npm ci --ignore-scripts')."))
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
    build_isolation: bool = Field(default=True, description=(
        "Build the repo itself in an isolated build environment (PEP 517); False: with the venv's own packages "
        "(--no-build-isolation in the env stage and the default install), for builds an isolated environment "
        "cannot do (undeclared Cython or numpy, a setuptools of the commit's era without PEP 660; mine/testdeps)."))
    pre_install: list[str] = Field(
        default_factory=list, description="Instance stage: shell commands run in the tree before install.")
    install: str | None = Field(
        default=None, description="Instance stage: command installing the repo, e.g. 'python -m pip install -e .'.")
    test_cmd: str = Field(default=DEFAULT_TEST_CMD, description="Test command; test files are appended.")
    directives: bool = Field(default=True, description=(
        "Append the test files (or Django labels) to test_cmd; False: test_cmd is whole (swebench's specs "
        "of other languages, a SWE-rebench V2 row's command list)."))
    eval_commands: list[str] = Field(
        default_factory=list, description="Shell commands run before the tests (exports already moved to env_vars).")
    env_vars: dict[str, str] = Field(default_factory=dict, description="Environment variables for test runs.")
    services: list[str] = Field(default_factory=list, description=(
        "Local stand-ins started inside the episode for test runs (names from envs/services.py, e.g. "
        "'httpbin' for tests that call httpbin.org); the sandbox still reaches nothing outside."))
    source: Literal["task", "swerebench", "swebench", "swegym", "default", "image", "language"] = Field(
        default="default", description=(
            "Where it came from (swerebench: the row's install_config; image: a container image, nothing built; "
            "language: a non-Python row's install_config, envs/lang)."))
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
        """The fields that decide the env stage (and only those; ``constraints``, ``packages_frozen``,
        ``env_setup`` and a ``language`` other than python only when set, so that adding them kept every
        existing key)."""
        fields = self.model_dump(include={"python", "seed_packages", "exclude_newer", "packages", "requirements_files",
                                          "optional_packages", "pip_packages", "install_repo_in_env", "install_extras",
                                          "constraints", "packages_frozen", "env_setup", "language",
                                          "build_isolation"})
        for key in ("constraints", "packages_frozen", "env_setup"):  # only when set, so that adding them kept every key
            if not fields[key]:
                del fields[key]
        if fields["build_isolation"]:  # only when off, so that adding it kept every key
            del fields["build_isolation"]
        if fields["language"] == "python":
            del fields["language"]
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
