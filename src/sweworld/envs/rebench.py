"""SWE-rebench rows: a row's ``install_config`` is its recipe (``EnvRecipe.source == "swerebench"``).

SWE-rebench (nebius/SWE-rebench and its monthly sets) publishes each instance's install recipe in
the row, in the keys of SWE-bench's specs, and its fork of the SWE-bench harness
(``SWE-rebench/SWE-bench-fork``: ``harness/utils.py`` ``_clean_install_config``,
``harness/test_spec/python.py``, ``harness/grading.py``) reads it so:

- ``None`` values are dropped; ``python`` below 3.6 becomes 3.6; ``install`` and ``test_cmd`` run
  with ``LANG=C.UTF-8 LC_ALL=C.UTF-8``; the environment is built at the base commit.
- ``packages``: ``requirements.txt`` -> a conda env with ``python``, then ``pip install -r`` of the
  files ``reqs_path`` names (downloaded at the commit, ``-r`` includes inlined, ``-e .`` dropped);
  ``environment.yml`` -> ``conda env create`` from ``env_yml_path`` (``no_use_env``: ``conda create``
  then ``conda env update``); anything else -> ``conda create python=X <packages>``.
- ``pip_packages`` installed after (joined unquoted into one ``pip install``: an entry may hold
  several packages); ``pre_install`` then ``install`` in the tree.
- tests: ``test_cmd`` + the test files of the test patch; parsed by the parser named ``log_parser``
  (``harness/grade.py`` maps the name).

Here, without conda or Docker:

- ``requirements.txt``: the row's ``requirements`` field (the frozen ``pip freeze`` SWE-rebench
  publishes) when it has one, installed as it is (``--no-deps``: a freeze is a closed set, and may pin
  what a resolver refuses, e.g. boto3 and a botocore of another release), else the ``reqs_path``
  files read from the tree at the env commit.
- ``environment.yml``: the row's ``environment`` field (the frozen ``conda env export``) when it has
  one, else the ``env_yml_path`` files of the tree. Its pip section is installed as it is; its conda
  dependencies become pip requirements (``name=1.2=build`` -> ``name==1.2``) where PyPI has them;
  the runtime every conda env carries (python, openssl, lib*, ...) and what pip wheels bundle (blas,
  mkl, ...) are skipped with a note; a conda-only package the project needs (gdal, nodejs, ...) is
  one ``EnvBuildError`` naming it and the instance.
- a conda package list: the same translation, the same error.
- the venv is seeded with the pip, setuptools and wheel of the row's ``environment`` (its image's);
- ``pip_packages`` split into shell words, as the fork's unquoted join splits them;
- ``env_vars`` (unread by the fork) are exported for test runs; ``no_use_env`` gives the same pip
  environment either way; the fork's reinstall before each test run is the install layer here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from sweworld.core import images
from sweworld.core.errors import EnvBuildError
from sweworld.core.types import ENV_FIELDS, Task, install_config_of
from sweworld.envs import swebench_specs as sbs
from sweworld.envs import swegym_installs
from sweworld.envs.recipes.model import DEFAULT_TEST_CMD, EnvRecipe

LOCALE = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
"""What the fork prefixes to ``install`` and ``test_cmd``."""
MIN_PYTHON = "3.6"
"""The fork's floor for ``python`` (conda has nothing older)."""
KEYS = ("python", "packages", "reqs_path", "env_yml_path", "pre_install", "install", "pip_packages",
        "no_use_env", "env_vars", "test_cmd", "log_parser")

#: conda packages every exported environment carries, or that pip wheels bundle: not needed here.
BUNDLED = {
    "python", "pip", "ca-certificates", "openssl", "ncurses", "readline", "sqlite", "tk", "tzdata", "xz",
    "zlib", "bzip2", "ld_impl_linux-64", "expat", "icu", "blas", "openblas", "mkl", "mkl-service", "nomkl",
    "intel-openmp", "llvm-openmp", "tbb", "freetype", "pkg-config", "zstd", "lz4-c", "jpeg", "hdf5", "qt",
    "git", "make", "krb5", "c-ares", "yaml", "fribidi", "libarchive", "gmp", "mpfr", "mpc",
}
#: conda-only packages a project needs at run time and pip cannot install.
NO_PIP = {
    "gdal", "geos", "proj", "graphviz", "ffmpeg", "imagemagick", "nodejs", "cairo", "pango", "ghostscript",
    "pandoc", "openjdk", "texlive-core", "cdms2", "pynio", "esmpy", "cudatoolkit", "r-base", "poppler",
    "tesseract", "gettext", "go", "rust", "julia",
}
_LIB_ON_PYPI = {"libcst", "librosa", "libsass", "libarchive-c"}
_NAME = re.compile(r"^\s*([A-Za-z0-9_][A-Za-z0-9._\-]*)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _conda_kind(name: str) -> str:
    """'bundled', 'no-pip' or 'pip' for a conda package name."""
    low = name.lower()
    if low in NO_PIP or low.startswith("r-"):
        return "no-pip"
    if low in BUNDLED or low.startswith("_") or low.endswith(("_linux-64", "-compiler")) or low == "compilers" or (
            low.startswith("lib") and low not in _LIB_ON_PYPI):
        return "bundled"
    return "pip"


def conda_to_pip_strict(specs: list[str], where: str, notes: list[str]) -> list[str]:
    """conda package specs -> pip requirements; runtime and bundled ones skipped (one note); a
    conda-only package is an ``EnvBuildError`` naming it and ``where``."""
    reqs: list[str] = []
    skipped: list[str] = []
    for spec in specs:
        text = spec.split("::", 1)[-1].strip()
        match = _NAME.match(text)
        if not match:
            notes.append(f"skipped conda spec '{spec}' (not understood)")
            continue
        kind = _conda_kind(match.group(1))
        if kind == "no-pip":
            raise EnvBuildError(
                f"conda package '{match.group(1)}' has no pip equivalent: this environment cannot be built "
                "without conda", where=where,
                hint=f"install {match.group(1)} on the host and drop it from the row's environment, or set "
                     "the row's own 'packages'/'pip_packages' fields (they win over install_config)")
        if kind == "bundled":
            skipped.append(match.group(1))
            continue
        req, note = sbs.conda_to_pip(text)
        if req:
            reqs.append(req)
        if note:
            notes.append(note)
    if skipped:
        notes.append(f"conda runtime packages skipped (the venv's interpreter and pip wheels bring them): "
                     f"{' '.join(skipped)}")
    return reqs


def _pip_lines(lines: list[str], repo: str, what: str, notes: list[str]) -> list[str]:
    """Frozen pip lines without comments, editable or local installs and the project itself."""
    own = _norm(repo.rsplit("/", 1)[-1])
    out: list[str] = []
    for raw in lines:
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        name = _NAME.match(line)
        if line.startswith(("-e", "--editable", ".")) or " @ file:" in line or "@ git+" in line or (
                name is not None and _norm(name.group(1)) == own):
            notes.append(f"{what}: '{line}' dropped (the repository is installed by 'install')")
            continue
        if line.startswith("-"):
            notes.append(f"{what}: option line '{line}' dropped")
            continue
        out.append(line)
    return out


def environment_to_pip(text: str, repo: str, where: str, what: str, notes: list[str]) -> list[str]:
    """A conda environment (an ``environment.yml`` or a ``conda env export``) -> pip requirements."""
    import yaml

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise EnvBuildError(f"{what} is not YAML: {exc}", where=where) from None
    if not isinstance(data, dict):
        raise EnvBuildError(f"{what} is not a conda environment (no mapping)", where=where)
    conda: list[str] = []
    pip: list[str] = []
    for dep in data.get("dependencies") or []:
        if isinstance(dep, dict):
            pip.extend(str(line) for line in dep.get("pip") or [])
        else:
            conda.append(str(dep))
    reqs = conda_to_pip_strict(conda, where, notes)
    pip_reqs = _pip_lines(pip, repo, what, notes)
    pip_names = {_norm(m.group(1)) for r in pip_reqs if (m := _NAME.match(r))}
    reqs = [r for r in reqs if (m := _NAME.match(r)) is None or _norm(m.group(1)) not in pip_names]
    if data.get("channels"):
        notes.append(f"{what}: conda channels {data['channels']} ignored")
    notes.append(f"{what}: {len(reqs)} conda dependencies and {len(pip_reqs)} pip dependencies installed with pip")
    return reqs + pip_reqs


SEED_TOOLS = ("pip", "setuptools", "wheel")
_CONDA_PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*=\s*([0-9][^=\s]*)")


def seed_tools(row: dict[str, Any], notes: list[str]) -> list[str]:
    """pip, setuptools and wheel as the row's image had them (its ``environment``: the ``conda env
    export`` SWE-rebench publishes, ``pip=25.0=py39...``), pinned right after the venv is made.
    Without them the venv gets today's (pip 26, setuptools 82), under which a ``setup.py`` project
    without a ``pyproject.toml`` builds in isolation and fails (``import six``)."""
    import yaml

    text = row.get("environment")
    if not text:
        return []
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return []
    pins: dict[str, str] = {}
    for dep in (data.get("dependencies") or []) if isinstance(data, dict) else []:
        lines = [str(x) for x in dep.get("pip") or []] if isinstance(dep, dict) else [str(dep).split("::")[-1]]
        for line in lines:
            match = _CONDA_PIN.match(line.replace("==", "="))
            if match and match.group(1).lower() in SEED_TOOLS:
                pins[match.group(1).lower()] = match.group(2)
    seeds = [f"{name}=={pins[name]}" for name in SEED_TOOLS if name in pins]
    if seeds:
        notes.append(f"venv seeded with {' '.join(seeds)}: the packaging tools of the row's environment")
    return seeds


def pip_words(values: list[str], notes: list[str]) -> list[str]:
    """``pip_packages`` as SWE-rebench's harness installs them: joined unquoted into one ``pip install``,
    so an entry holding several packages (``'pytest pytest-cov'``) is several requirements."""
    words = [word for value in values for word in shlex.split(value)]
    if len(words) != len(values):
        notes.append("pip_packages entries split into words, as the fork's `pip install` of them joined "
                     "unquoted does")
    return words


def _python(value: Any, notes: list[str]) -> str:
    text = str(value) if value is not None else ""
    match = re.search(r"(\d+)\.(\d+)", text)
    if not match:
        notes.append(f"install_config python {value!r} not understood: Python 3.11")
        return "3.11"
    if (int(match.group(1)), int(match.group(2))) < (3, 6):
        notes.append(f"python {text} raised to {MIN_PYTHON} (as SWE-rebench's harness does)")
        return MIN_PYTHON
    return f"{match.group(1)}.{match.group(2)}"


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(v) for v in value]


def _env_vars(value: Any, notes: list[str]) -> dict[str, str]:
    if not value:
        return {}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    pairs = shlex.split(value) if isinstance(value, str) else [str(v) for v in value]
    out = dict(p.split("=", 1) for p in pairs if "=" in p)
    if len(out) != len(pairs):
        notes.append(f"env_vars entries without '=' ignored: {value!r}")
    return out


def _from_tree(tree: Path | None, paths: list[str], what: str, where: str) -> Path:
    if tree is None:
        raise EnvBuildError(f"install_config names {what} {paths} in the tree, and no tree was given", where=where,
                            hint="call resolve_recipe(task, tree) with the tree at the environment commit")
    found = sbs.first_existing(tree, paths)
    if found is None:
        raise EnvBuildError(f"none of {what} {paths} exists in the tree at the environment commit", where=where,
                            hint="check the row's environment_setup_commit, or give the row its frozen "
                                 "'requirements'/'environment' field")
    return found


def _packages(config: dict[str, Any], row: dict[str, Any], repo: str, tree: Path | None, where: str,
              notes: list[str]) -> tuple[list[str], bool]:
    """(pip requirements, whether they are the row's frozen ``pip freeze``)."""
    packages = str(config.get("packages") or "").strip()
    if packages == "requirements.txt":
        frozen = row.get("requirements")
        if isinstance(frozen, str) and frozen.strip():
            notes.append("requirements: the row's frozen 'requirements' field (not reqs_path), installed as it is")
            return _pip_lines(frozen.splitlines(), repo, "requirements", notes), True
        paths = _list(config.get("reqs_path")) or sbs.reqs_paths(repo) or ["requirements.txt"]
        found = _from_tree(tree, paths, "reqs_path", where)
        notes.append(f"requirements read from {found.relative_to(tree)} at the environment commit")
        return sbs.read_requirements(found, tree, notes), False
    return _conda_packages(config, row, repo, tree, where, packages, notes), False


def _conda_packages(config: dict[str, Any], row: dict[str, Any], repo: str, tree: Path | None, where: str,
                    packages: str, notes: list[str]) -> list[str]:
    if packages == "environment.yml":
        frozen = row.get("environment")
        if isinstance(frozen, str) and frozen.strip():
            return environment_to_pip(frozen, repo, where, "environment (the row's conda export)", notes)
        paths = _list(config.get("env_yml_path")) or sbs.env_yml_paths(repo) or ["environment.yml"]
        found = _from_tree(tree, paths, "env_yml_path", where)
        return environment_to_pip(found.read_text(encoding="utf-8", errors="replace"), repo, where,
                                  str(found.relative_to(tree)), notes)
    if packages:
        reqs = conda_to_pip_strict(shlex.split(packages), where, notes)
        notes.append(f"conda packages '{packages}' installed with pip as {reqs}")
        return reqs
    return []


def from_install_config(row: dict[str, Any], repo: str, tree: Path | None, *, instance_id: str = "") -> EnvRecipe:
    """The recipe of a SWE-rebench row (``row`` holds ``install_config`` and may hold the frozen
    ``requirements`` and ``environment`` fields); ``tree`` is the tree at the env commit or None."""
    where = f"instance {instance_id}" if instance_id else repo
    config = {k: v for k, v in (install_config_of(row) or {}).items() if v is not None}
    notes: list[str] = ["recipe: the row's install_config (SWE-rebench)"]
    unknown = sorted(set(config) - set(KEYS))
    if unknown:
        notes.append(f"install_config keys not read here: {', '.join(unknown)}")
    if config.get("no_use_env"):
        notes.append("no_use_env: conda create then env update in SWE-rebench; the same pip environment here")
    packages, frozen = _packages(config, row, repo, tree, where, notes)
    pre = sbs.drop_system_commands(_list(config.get("pre_install")), "pre_install", notes)
    pre, install = swegym_installs.translate(pre, str(config.get("install") or "").strip() or None, notes)
    env_vars = {**LOCALE, **_env_vars(config.get("env_vars"), notes)}
    test_cmd = config.get("test_cmd") or DEFAULT_TEST_CMD
    if isinstance(test_cmd, list):
        test_cmd = " && ".join(test_cmd)
    return EnvRecipe(python=_python(config.get("python"), notes), packages=packages, packages_frozen=frozen,
                     seed_packages=seed_tools(row, notes),
                     pip_packages=pip_words(_list(config.get("pip_packages")), notes), pre_install=pre,
                     install=f"LANG=C.UTF-8 LC_ALL=C.UTF-8 {install}" if install else None,
                     test_cmd=str(test_cmd), env_vars=env_vars, source="swerebench", notes=notes)


def to_row(task: Task, install_config: dict[str, Any], *, requirements: str | None = None,
           environment: str | None = None) -> dict[str, Any]:
    """``task`` as SWE-rebench publishes a row: sweworld's environment fields dropped (where the
    repository comes from stays), the recipe in ``install_config`` (``KEYS``), the frozen
    ``requirements`` (a ``pip freeze``) or ``environment`` (a ``conda env export``) beside it, and
    ``docker_image`` / ``image_name`` as SWE-rebench names the image."""
    own = set(ENV_FIELDS) - {"repo_source"}
    row = {k: v for k, v in task.model_dump(mode="json").items() if k not in own and v is not None}
    row["install_config"] = {key: install_config.get(key) for key in KEYS}
    if requirements is not None:
        row["requirements"] = requirements
    if environment is not None:
        row["environment"] = environment
    row["docker_image"] = row["image_name"] = images.rebench_image(task.instance_id)
    return row
