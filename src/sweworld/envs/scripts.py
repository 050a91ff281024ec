"""Bash scripts that build an environment from an EnvRecipe (pure functions, nothing runs here).

The scripts run inside the sandbox with the tree at ``workdir`` (``/testbed``) and the virtualenv at
``venv`` (``/sweworld/venv``); both paths are fixed so that shebangs and editable installs stay
valid in every later episode. The network is available during builds.

- env stage: create the venv (``uv venv --seed`` when uv is given and Python >= 3.8, else
  ``python -m venv``), then ``packages``, requirement files, best-effort ``optional_packages``,
  ``pip_packages`` and, for the default recipe, the repo itself with its test extras.
- instance stage: ``pre_install`` then ``install``, with the venv's bin first on PATH so that
  ``python -m pip install -e .`` installs into the venv.

A recipe of another ``language`` has its env stage from that language (``envs.lang.stage``) and an
instance stage of its own first lines, then the same steps.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from sweworld.core.errors import EnvBuildError
from sweworld.envs.recipes import EnvRecipe
from sweworld.envs.shell import command_segments

DEFAULT_VENV = "/sweworld/venv"
DEFAULT_WORKDIR = "/testbed"
UV_MIN_PYTHON = (3, 8)
OFFLINE_ENV = {"PIP_NO_INDEX": "1", "UV_OFFLINE": "1", "PIP_NO_BUILD_ISOLATION": "0"}
"""Installs from local sources only: no index, no build isolation (pip reads 0 as "disable"), so
builds use the venv's own setuptools. Used by offline scripts and by reinstalls in episodes."""


def _version(recipe: EnvRecipe) -> tuple[int, int]:
    try:
        major, minor = (int(p) for p in recipe.python.split(".")[:2])
    except ValueError as exc:
        raise EnvBuildError(f"recipe python '{recipe.python}' is not 'X.Y'") from exc
    if major < 3:
        raise EnvBuildError(
            f"Python {recipe.python} environments are not supported: the standard library venv module "
            "exists only from Python 3.3, uv does not build Python 2 environments and virtualenv is not "
            "available in the sandbox",
            hint="use a Python 3 interpreter for this task (set 'python' on the task)")
    return major, minor


def _uses_uv(recipe: EnvRecipe, uv: Path | None) -> bool:
    return uv is not None and _version(recipe) >= UV_MIN_PYTHON


def _header(stage: str, recipe: EnvRecipe, workdir: str, offline: bool,
            extra_env: Mapping[str, str] | None) -> list[str]:
    lines = [
        "#!/usr/bin/env bash",
        f"# sweworld {stage} stage: {recipe.source} recipe, Python {recipe.python}",
        "set -euxo pipefail",
        "export PIP_DISABLE_PIP_VERSION_CHECK=1",
        "export PIP_NO_INPUT=1",
        "export UV_LINK_MODE=copy",
        "export UV_PYTHON_DOWNLOADS=never",
    ]
    if offline:
        lines += [f"export {key}={value}" for key, value in OFFLINE_ENV.items()]
    for key, value in (extra_env or {}).items():
        lines.append(f"export {key}={shlex.quote(str(value))}")
    if recipe.constraints:  # every pip and uv install of the stage obeys them
        lines += _heredoc("__sweworld_constraints", list(recipe.constraints))
        lines += ['export PIP_CONSTRAINT="$__sweworld_constraints"', 'export UV_CONSTRAINT="$__sweworld_constraints"']
    lines.append(f"cd {shlex.quote(workdir)}")
    return lines


def _activate(venv: str, uv: Path | None) -> list[str]:
    path = f"{shlex.quote(venv)}/bin"
    if uv is not None:
        path += f":{shlex.quote(str(Path(uv).parent))}"
    return [f"export VIRTUAL_ENV={shlex.quote(venv)}", f'export PATH={path}:"$PATH"',
            "unset PYTHONHOME PYTHONPATH || true"]


def _pip(recipe: EnvRecipe, venv: str, uv: Path | None) -> str:
    if _uses_uv(recipe, uv):
        cutoff = f" --exclude-newer {shlex.quote(recipe.exclude_newer)}" if recipe.exclude_newer else ""
        return f"{shlex.quote(str(uv))} pip install --python {shlex.quote(venv)}/bin/python{cutoff}"
    return f"{shlex.quote(venv)}/bin/python -m pip install"


_PIP_INSTALL = re.compile(r"^\s*(?:python\S*\s+-m\s+pip|pip\S*)\s+install\s+(.*)$")


def _pre_resolve(recipe: EnvRecipe, venv: str, uv: Path | None) -> list[str]:
    """With a date cutoff, the dependencies of each ``pip install`` of the install command (one, or
    each of a shell list like SWE-Gym's ``pip install A; pip install B || true; pip install -e .``)
    are first resolved by uv as of that date, in order (pip 24 has no cutoff); the recipe's own
    commands then find them installed. Best effort: a failure is echoed, the install runs as written."""
    if not (recipe.exclude_newer and _uses_uv(recipe, uv)):
        return []
    lines = []
    for segment in command_segments(recipe.install or ""):
        match = _PIP_INSTALL.match(segment)
        if match and not any(c in match.group(1) for c in "|&`$"):
            lines.append(f"{_pip(recipe, venv, uv)} {match.group(1)} || echo 'sweworld: dependencies not "
                         f"pre-resolved as of {recipe.exclude_newer}' >&2")
    return lines


def _heredoc(path_var: str, lines: list[str]) -> list[str]:
    body = "\n".join(lines)
    tag = "SWEWORLD_EOF_" + hashlib.sha256(body.encode()).hexdigest()[:12]
    return [f'{path_var}="$(mktemp)"', f"cat > \"${path_var}\" <<'{tag}'\n{body}\n{tag}"]


def env_stage_script(recipe: EnvRecipe, *, python: Path, venv: str = DEFAULT_VENV, uv: Path | None = None,
                     workdir: str = DEFAULT_WORKDIR, offline: bool = False,
                     extra_env: Mapping[str, str] | None = None) -> str:
    """The env-stage script: create the venv with ``python`` and install the dependencies.

    ``python`` is the real interpreter binary (see discovery.find_interpreter); ``uv`` the uv binary
    or None; ``offline`` installs from local sources only (no index, no build isolation: builds
    use the venv's own setuptools); ``extra_env`` is exported first (index URLs, cache dirs).
    """
    version = _version(recipe)
    use_uv = _uses_uv(recipe, uv)
    q_venv, q_python = shlex.quote(venv), shlex.quote(str(python))
    lines = _header("env", recipe, workdir, offline, extra_env)
    lines.append(f"mkdir -p {q_venv} && find {q_venv} -mindepth 1 -maxdepth 1 -exec rm -rf {{}} +")  # may be a mount point
    if use_uv:
        lines.append(f"{shlex.quote(str(uv))} venv --seed --python {q_python} {q_venv}")
    else:
        lines.append(f"{q_python} -m venv {q_venv}")
    lines += _activate(venv, uv if use_uv else None)
    pip = _pip(recipe, venv, uv)
    # Seed what a conda env has: pip, setuptools and wheel (uv seeds setuptools/wheel only below 3.12),
    # pinned when the recipe says which (see envs/era.py).
    if recipe.seed_packages:
        lines.append(f"{pip} " + " ".join(shlex.quote(p) for p in recipe.seed_packages))
    elif not offline:
        if not use_uv:
            lines.append(f"{pip} --upgrade pip setuptools wheel")
        elif version >= (3, 12):
            lines.append(f"{pip} setuptools wheel")
    if recipe.packages:
        lines += _heredoc("SWEWORLD_REQS", recipe.packages)
        lines.append(f'{pip}{" --no-deps" if recipe.packages_frozen else ""} -r "$SWEWORLD_REQS"')
    if recipe.requirements_files:
        cands = " ".join(shlex.quote(f) for f in recipe.requirements_files)
        lines.append(f'SWEWORLD_FOUND=""; for f in {cands}; do if [ -f "$f" ]; then {pip} -r "$f"; '
                     'SWEWORLD_FOUND="$f"; break; fi; done')
        lines.append(f'[ -n "$SWEWORLD_FOUND" ] || {{ echo "sweworld: none of {cands} exists" >&2; exit 1; }}')
    if recipe.optional_packages:
        lines += _heredoc("SWEWORLD_OPT", recipe.optional_packages)
        lines.append(f'if ! {pip} -r "$SWEWORLD_OPT"; then\n'
                     f'  while IFS= read -r req; do {pip} "$req" || '
                     'echo "sweworld: skipped optional requirement $req" >&2; done < "$SWEWORLD_OPT"\nfi')
    if recipe.pip_packages:
        lines.append(f"{pip} " + " ".join(shlex.quote(p) for p in recipe.pip_packages))
    if recipe.install_repo_in_env:
        target = "." + (f"[{','.join(recipe.install_extras)}]" if recipe.install_extras else "")
        isolation = "" if recipe.build_isolation else " --no-build-isolation"  # its build needs the venv's packages
        lines.append(f"{pip}{isolation} -e {shlex.quote(target)}")
    lines.append(f"{q_venv}/bin/python -c 'import sys; print(sys.version)'")
    return "\n".join(lines) + "\n"


def instance_stage_script(recipe: EnvRecipe, *, venv: str = DEFAULT_VENV, uv: Path | None = None,
                          workdir: str = DEFAULT_WORKDIR, offline: bool = False,
                          extra_env: Mapping[str, str] | None = None, prepare: Sequence[str] = ()) -> str:
    """The instance-stage script: ``prepare`` lines (e.g. filling submodules, see submodule_fill.py),
    then ``pre_install`` then ``install`` in the tree, venv first on PATH.

    When uv is given its directory follows the venv's bin on PATH, so ``uv pip`` works in commands.
    """
    if recipe.language != "python":
        return _other_instance_stage(recipe, venv=venv, workdir=workdir, extra_env=extra_env, prepare=prepare)
    _version(recipe)
    q_venv = shlex.quote(venv)
    lines = _header("instance", recipe, workdir, offline, extra_env)
    lines.append(f'[ -x {q_venv}/bin/python ] || {{ echo "sweworld: no virtualenv at {venv}" >&2; exit 1; }}')
    lines += _activate(venv, uv)
    lines += list(prepare)
    lines += list(recipe.pre_install)
    if recipe.install:
        lines += _pre_resolve(recipe, venv, uv)
        lines.append(recipe.install)
    return "\n".join(lines) + "\n"


def _other_instance_stage(recipe: EnvRecipe, *, venv: str, workdir: str, extra_env: Mapping[str, str] | None,
                          prepare: Sequence[str]) -> str:
    """The instance stage of another language (``envs.lang``): its own first lines (e.g. the tree's
    ``node_modules`` linked to the environment's), then ``prepare``, ``pre_install`` and ``install``."""
    from sweworld.envs import lang

    language = lang.get(recipe.language)
    lines = ["#!/usr/bin/env bash", f"# sweworld instance stage: {recipe.source} recipe, {recipe.language}",
             "set -euxo pipefail", *(f"export {k}={shlex.quote(str(v))}" for k, v in (extra_env or {}).items()),
             f"cd {shlex.quote(workdir)}"]
    lines += language.instance_lines(recipe, venv) if language.instance_lines else []
    lines += [*prepare, *recipe.pre_install, *([recipe.install] if recipe.install else [])]
    return "\n".join(lines) + "\n"
