"""Install specs of the installed ``swebench`` package (read-only view, imported lazily).

``swebench`` is slow to import, so every function imports it on first use; nothing here runs at
import time.
"""

from __future__ import annotations

import copy
import functools
import re
import shlex
from pathlib import Path
from typing import Any

from sweworld.envs import vcs

# Spec keys that sweworld translates into an EnvRecipe; the rest are recorded in notes.
SUPPORTED_KEYS = ("python", "packages", "pip_packages", "pre_install", "install", "test_cmd",
                  "eval_commands", "no_use_env", "env_vars_test")
IGNORED_KEYS = {
    "nano_cpus": "CPU quota of the SWE-bench container (the sandbox sets its own limits)",
    "execute_test_as_nonroot": "the sandbox always runs as an unprivileged user",
    "docker_specs": "docker image settings (no docker here)",
    "apt-pkgs": "apt packages cannot be installed without root",
    "build": "non-Python build steps",
}

# Packages yanked from PyPI that swebench replaces when it reads requirement files.
_FALLBACK_REPLACEMENTS = (("types-pkg_resources", "types-setuptools"),)


@functools.lru_cache(maxsize=1)
def _constants() -> Any:
    from swebench.harness import constants

    return constants


def all_specs() -> dict[str, dict[str, dict[str, Any]]]:
    """``MAP_REPO_VERSION_TO_SPECS``: repo -> version -> spec dict (do not mutate)."""
    return _constants().MAP_REPO_VERSION_TO_SPECS


def spec_for(repo: str, version: str | float | None) -> dict[str, Any] | None:
    """A copy of the swebench spec for (repo, version); None when swebench has none.

    ``version`` may arrive as a float (``0.2`` from a JSON number); it is matched as a string.
    """
    if version is None or version == "":
        return None
    specs = all_specs().get(repo)
    if not specs:
        return None
    key = str(version)
    spec = specs.get(key)
    if spec is None and not key.startswith("v"):
        spec = specs.get("v" + key)
    return copy.deepcopy(spec) if spec is not None else None


def has_repo(repo: str) -> bool:
    """Whether swebench knows install specs for this repository at any version."""
    return repo in all_specs()


def reqs_paths(repo: str) -> list[str]:
    """Candidate requirement-file paths inside the tree (``MAP_REPO_TO_REQS_PATHS``), in order."""
    return list(_constants().MAP_REPO_TO_REQS_PATHS.get(repo, []))


def env_yml_paths(repo: str) -> list[str]:
    """Candidate environment.yml paths inside the tree (``MAP_REPO_TO_ENV_YML_PATHS``), in order."""
    return list(_constants().MAP_REPO_TO_ENV_YML_PATHS.get(repo, []))


def requirement_replacements() -> tuple[tuple[str, str | None], ...]:
    """(yanked package, replacement or None) pairs swebench applies to requirement files."""
    try:
        from swebench.harness.test_spec.python import REPLACE_REQ_PACKAGES
    except ImportError:  # pragma: no cover - older or newer swebench layouts
        return _FALLBACK_REPLACEMENTS
    return tuple(REPLACE_REQ_PACKAGES)


# ---------------------------------------------------------------------------------------------
# Translation of conda-based steps to virtualenv builds (pip requirements), with notes.

# conda name -> PyPI name where they differ.
CONDA_TO_PIP = {
    "dask-core": "dask", "matplotlib-base": "matplotlib", "pytables": "tables",
    "python-graphviz": "graphviz", "msgpack-python": "msgpack", "pyqt": "PyQt5", "pytorch": "torch",
    "iris": "scitools-iris", "py-xgboost": "xgboost", "ruamel_yaml": "ruamel.yaml", "jpype1": "JPype1",
    "tensorflow-base": "tensorflow", "typing-extensions": "typing_extensions",
}
# conda packages that are not Python distributions on PyPI (or only conda's binary build of one).
CONDA_ONLY = {
    "python", "pip", "hdf5", "libnetcdf", "geos", "proj", "gdal", "graphviz", "ffmpeg", "imagemagick",
    "openblas", "blas", "mkl", "nomkl", "nodejs", "qt", "cairo", "freetype", "pkg-config", "zlib", "tk",
    "pango", "git", "compilers", "make", "ghostscript", "pandoc", "sqlite", "openssl", "ca-certificates",
    "cdms2", "pynio", "esmpy", "openjdk", "texlive-core", "tzdata-conda", "icu", "xz", "ncurses",
}
_LIB_ON_PYPI = {"libcst", "librosa", "libsass", "libarchive-c"}
_CONDA_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*(.*)$")


def conda_to_pip(spec: str) -> tuple[str | None, str | None]:
    """One conda package spec -> (pip requirement or None, note or None)."""
    text = spec.strip()
    note = None
    if "::" in text:
        channel, text = text.split("::", 1)
        note = f"conda channel '{channel}' ignored for '{text}'"
    match = _CONDA_SPEC.match(text)
    if not match:
        return None, f"skipped conda spec '{spec}' (not understood)"
    name, rest = match.group(1), match.group(2).replace(" ", "")
    low = name.lower()
    if low in CONDA_ONLY or low.startswith("_") or low.endswith(("_linux-64", "-compiler")) or (
            low.startswith("lib") and low not in _LIB_ON_PYPI):
        return None, f"skipped conda package '{spec}' (not a pip package)"
    pip_name = CONDA_TO_PIP.get(low, name)
    if pip_name != name:
        note = f"conda package '{name}' installed as pip '{pip_name}'"
    if "|" in rest:
        return pip_name, f"dropped conda version '{rest}' of '{name}' (alternatives are not pip syntax)"
    if rest.startswith("=") and not rest.startswith("=="):
        version = rest[1:].split("=")[0]  # name=1.2=build -> ==1.2
        rest = f"=={version}"
    elif rest and rest[0].isdigit():
        rest = f"=={rest.split('=')[0]}"
    return f"{pip_name}{rest}", note


def conda_packages_to_pip(packages: str | list[str]) -> tuple[list[str], list[str]]:
    """A space-separated conda package list (as in swebench specs) -> (pip requirements, notes)."""
    items = shlex.split(packages) if isinstance(packages, str) else list(packages)
    reqs: list[str] = []
    notes: list[str] = []
    for item in items:
        req, note = conda_to_pip(item)
        if req:
            reqs.append(req)
        if note:
            notes.append(note)
    return reqs, notes


def _replace_yanked(line: str) -> str | None:
    for old, new in requirement_replacements():
        if re.match(rf"^{re.escape(old)}([<>=!~;\s]|$)", line.strip()):
            return new
    return line


def read_requirements(path: Path, root: Path, notes: list[str], _seen: set[Path] | None = None) -> list[str]:
    """Lines of a requirements file, ``-r`` includes inlined, local self-installs dropped (as swebench)."""
    seen = _seen if _seen is not None else set()
    path = path.resolve()
    if path in seen:
        return []
    seen.add(path)
    rel = path.relative_to(root.resolve()) if path.is_relative_to(root.resolve()) else path
    out: list[str] = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r", "--requirement")):
            include = line.split(None, 1)[1] if " " in line else line[2:]
            target = (path.parent / include.strip()).resolve()
            if target.is_file():
                out.extend(read_requirements(target, root, notes, seen))
            else:
                notes.append(f"{rel}: included file '{include.strip()}' not found, skipped")
            continue
        if line.startswith(("-c", "--constraint")):
            notes.append(f"{rel}: constraint line '{line}' dropped")
            continue
        if line.startswith(("-e .", ".[", "-e ./", "--editable .")) or line in (".", "-e."):
            notes.append(f"{rel}: self-install line '{line}' dropped (the repo is installed by 'install')")
            continue
        line = vcs.rewrite(line, str(rel), notes)
        replaced = _replace_yanked(line)
        if replaced != line:
            notes.append(f"{rel}: yanked '{line}' replaced by '{replaced}'")
        if replaced:
            out.append(replaced)
    return out


def read_environment_yml(path: Path, root: Path, notes: list[str]) -> tuple[list[str], list[str]]:
    """environment.yml -> (pip section as requirements, conda dependencies as pip requirements)."""
    import yaml

    rel = path.relative_to(root) if path.is_relative_to(root) else path
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    pip_reqs: list[str] = []
    conda_reqs: list[str] = []
    for dep in data.get("dependencies") or []:
        if isinstance(dep, dict):
            for line in dep.get("pip") or []:
                line = str(line).strip()
                if line.startswith("-r"):
                    target = path.parent / line[2:].strip()
                    if target.is_file():
                        pip_reqs.extend(read_requirements(target, root, notes))
                    continue
                if line.startswith(("-e .", ".")):
                    notes.append(f"{rel}: self-install line '{line}' dropped")
                    continue
                replaced = _replace_yanked(vcs.rewrite(line, str(rel), notes))
                if replaced:
                    pip_reqs.append(replaced)
            continue
        req, note = conda_to_pip(str(dep))
        if req:
            conda_reqs.append(req)
        if note:
            notes.append(f"{rel}: {note}")
    if data.get("channels"):
        notes.append(f"{rel}: conda channels {data['channels']} ignored")
    notes.append(f"{rel}: {len(conda_reqs)} conda dependencies installed from PyPI (best effort)"
                 f" and {len(pip_reqs)} pip dependencies")
    return pip_reqs, conda_reqs


def first_existing(root: Path, candidates: list[str]) -> Path | None:
    """The first candidate path that is a file inside ``root``."""
    for rel in candidates:
        if (root / rel).is_file():
            return root / rel
    return None


# Commands that need root or conda: dropped from pre_install / eval_commands (with a note).
_SYSTEM = re.compile(
    r"(^|[;&|(]\s*|\s)(sudo|apt-get|apt|aptitude|yum|dnf|apk|conda|mamba|micromamba|locale-gen|"
    r"update-locale|dpkg|dpkg-reconfigure|systemctl|service|useradd)(\s|$)"
    r"|source\s+activate|/opt/(mini)?conda|>>?\s*/(etc|usr|opt)/|\bsed\s+-i\b[^;&|]*\s/(etc|usr|opt)/")


def needs_root_or_conda(command: str) -> bool:
    """Whether a shell command installs system packages, uses conda or writes outside the tree."""
    return bool(_SYSTEM.search(command))


def drop_system_commands(commands: list[str], field: str, notes: list[str]) -> list[str]:
    """The commands that need neither root nor conda; a note for each one dropped."""
    kept = []
    for command in commands:
        if needs_root_or_conda(command):
            notes.append(f"dropped {field} `{command}` (needs root or conda; provide it on the host)")
        else:
            kept.append(command)
    return kept


_EXPORT_LINE = re.compile(r"^export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def split_exports(commands: list[str], env: dict[str, str]) -> list[str]:
    """Move plain `export K=V` lines into ``env``; return the other commands."""
    kept = []
    for command in commands:
        match = _EXPORT_LINE.match(command.strip())
        if match and "$" not in match.group(2) and "`" not in match.group(2):
            env[match.group(1)] = " ".join(shlex.split(match.group(2)))
        else:
            kept.append(command)
    return kept


_TREE_SED = re.compile(r"""sed -i (['"])s/((?:[^/\\]|\\.)*)/(?:[^/\\]|\\.)*/\1 ([^\s;&|/][^\s;&|]*)""")


def tree_edit_commands(spec: dict[str, Any] | None) -> list[str]:
    """The commands of ``spec``'s ``pre_install`` that edit files of the repository (``tree_edits``):
    nothing else of it (an ``apt-get``, a venv) is in them."""
    return [command for command in (spec or {}).get("pre_install") or [] if _TREE_SED.search(command)]


def tree_edits(spec: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(file, the text it matches) of each ``sed -i s/PATTERN/.../ FILE`` of ``spec``'s
    ``pre_install`` on a file of the repository (a relative path): the edits of tracked files that
    SWE-bench's images hold after their set-up (sphinx's ``tox.ini`` and ``setup.py`` pins,
    astropy's ``pyproject.toml``, pytest 6.3's ``setup.cfg``), and that agents' diffs against the
    base commit then carry beside their fix (docs/swebench.md)."""
    found = []
    for command in (spec or {}).get("pre_install") or []:
        found += [(m.group(3), re.sub(r"\\(.)", r"\1", m.group(2))) for m in _TREE_SED.finditer(command)]
    return found


def specs_editing_the_tree() -> dict[str, dict[tuple[str, ...], list[str]]]:
    """repository -> {its commands that edit the tree (``tree_edit_commands``): the versions that have
    them}, for every spec whose set-up edits tracked files."""
    out: dict[str, dict[tuple[str, ...], list[str]]] = {}
    for repo, versions in all_specs().items():
        for version, spec in versions.items():
            if tree_edits(spec):
                out.setdefault(repo, {}).setdefault(tuple(tree_edit_commands(spec)), []).append(str(version))
    return out
