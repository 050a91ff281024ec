"""Find Python interpreters on this machine: uv, pyenv, then ``pythonX.Y`` on PATH.

Every candidate is run once to learn its real executable, its version and its installation prefix
(the sandbox bind-mounts that prefix read-only so that a virtualenv built on it works inside).
pyenv shims and virtualenvs are seen through: the interpreter itself reports its real binary and
base prefix. Results are cached for the life of the process.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import ConfigError, EnvBuildError

log = logging.getLogger(__name__)

# Works on Python 2.7 and 3.x; ``real_prefix`` is set by old virtualenvs, ``base_prefix`` by venv.
_PROBE = (
    "import os, sys; "
    "print('%d.%d.%d' % tuple(sys.version_info[:3])); "
    "print(os.path.realpath(sys.executable)); "
    "print(os.path.realpath(getattr(sys, 'real_prefix', None) or getattr(sys, 'base_prefix', sys.prefix)))"
)
_PROBE_TIMEOUT = 30


@dataclass(frozen=True)
class Interpreter:
    """A verified Python interpreter."""

    version: str
    """'X.Y', e.g. '3.11'."""
    full_version: str
    """'X.Y.Z' as the interpreter reports it."""
    path: Path
    """Resolved real path of the binary (no symlinks, no pyenv shim)."""
    prefix: Path
    """Resolved ``sys.base_prefix``: the tree the sandbox must bind-mount read-only."""
    found_by: str
    """Where it was found: 'uv', 'pyenv' or 'PATH'."""

    @property
    def version_tuple(self) -> tuple[int, int]:
        major, minor = self.version.split(".")
        return int(major), int(minor)


def _normalise(version: str) -> str:
    text = version.strip().lower().removeprefix("python").removeprefix("py").strip()
    parts = text.split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
        return f"{int(parts[0])}.{int(parts[1])}"
    raise EnvBuildError(f"not a Python version: {version!r}", hint="use 'X.Y', e.g. '3.11'")


def _probe(candidate: Path | str, found_by: str) -> Interpreter | None:
    """Run a candidate interpreter; None when it does not run or does not answer sensibly."""
    try:
        proc = subprocess.run([str(candidate), "-c", _PROBE], capture_output=True, text=True,
                              timeout=_PROBE_TIMEOUT, env={**os.environ, "PYTHONNOUSERSITE": "1"},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or len(lines) != 3:
        return None
    full, exe, prefix = lines
    major, minor = full.split(".")[:2]
    return Interpreter(version=f"{major}.{minor}", full_version=full, path=Path(exe),
                       prefix=Path(prefix), found_by=found_by)


def pyenv_root() -> Path:
    """``$PYENV_ROOT`` or ``~/.pyenv``."""
    return Path(os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv"))


def _patch_key(path: Path) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.\-]", path.name))


@functools.cache
def _unreadable(path: str, reason: str) -> None:
    """Say once per process that ``path`` could not be read (discovery goes on with the other sources)."""
    log.warning("interpreter discovery: cannot read %s (%s); the pyenv interpreters there are skipped "
                "and uv and PATH are still searched: make it readable to this user, or point PYENV_ROOT at "
                "a pyenv of your own", path, reason)


def _listing(folder: Path) -> list[Path]:
    """The entries of ``folder``; none (said once) when it cannot be read, none when it is absent."""
    try:
        return list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        _unreadable(str(folder), exc.strerror or type(exc).__name__)
        return []


def _runnable(binary: Path) -> bool:
    try:
        return binary.exists()
    except OSError as exc:  # a version directory of another user's, closed to this one
        _unreadable(str(binary.parent.parent), exc.strerror or type(exc).__name__)
        return False


def _pyenv_candidates(version: str) -> list[Path]:
    dirs = [d for d in _listing(pyenv_root() / "versions") if re.fullmatch(rf"{re.escape(version)}\.\d+", d.name)]
    return [d / "bin" / f"python{version}" for d in sorted(dirs, key=_patch_key, reverse=True)
            if _runnable(d / "bin" / f"python{version}")]


def _uv_bin() -> str | None:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def _uv_env() -> dict[str, str]:
    """uv's environment: no downloads, and its cache in sweworld's (the builds' own uv cache), never
    ``~/.cache/uv``: discovery writes nothing outside ``$SWEWORLD_HOME``."""
    from sweworld.core.paths import subdir
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    try:
        env["UV_CACHE_DIR"] = str(subdir("cache", "uv"))
    except ConfigError:  # no usable $SWEWORLD_HOME: a temporary cache, removed when uv exits
        env["UV_NO_CACHE"] = "1"
    return env


def _uv_candidate(version: str) -> str | None:
    uv = _uv_bin()
    if uv is None:
        return None
    env = _uv_env()
    try:
        proc = subprocess.run([uv, "python", "find", "--no-python-downloads", "--system", "--no-project",
                               "--no-config", version], capture_output=True, text=True, env=env,
                              cwd="/", timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out.splitlines()[-1] if proc.returncode == 0 and out else None


def _path_candidate(version: str) -> str | None:
    return shutil.which(f"python{version}")


def find_interpreter(version: str) -> Interpreter:
    """The interpreter for 'X.Y': uv first, then pyenv (highest patch), then ``pythonX.Y`` on PATH.

    Accepts '3.11', '3.11.4' (the patch is ignored) or 'python3.11'. Cached for the process.
    Raises EnvBuildError naming every place looked at when none runs and reports that version.
    """
    return _find(_normalise(version))


def clear_cache() -> None:
    """Forget every interpreter found so far (e.g. after installing one)."""
    _find.cache_clear()


@functools.cache
def _find(want: str) -> Interpreter:
    tried: list[str] = []
    finders = (
        ("uv", lambda: [c] if (c := _uv_candidate(want)) else []),
        ("pyenv", lambda: _pyenv_candidates(want)),
        ("PATH", lambda: [c] if (c := _path_candidate(want)) else []),
    )
    for found_by, candidates in finders:
        found = candidates()
        if not found:
            tried.append(f"{found_by}: nothing")
        for candidate in found:
            interp = _probe(candidate, found_by)
            if interp is not None and interp.version == want:
                return interp
            tried.append(f"{found_by}: {candidate} ({'did not run' if interp is None else interp.version})")
    where = [f"`uv python find --no-python-downloads --system {want}`",
             f"{pyenv_root() / 'versions'}/{want}.*/bin/python{want}", f"python{want} on PATH"]
    raise EnvBuildError(
        f"no Python {want} interpreter found; looked at: " + "; ".join(where)
        + "\n  candidates tried: " + ("; ".join(tried) or "none"),
        hint=f"install it with `uv python install {want}` or `pyenv install {want}` "
             f"(or put python{want} on PATH), then retry",
    )


def _known_versions() -> set[str]:
    versions: set[str] = set()
    for d in _listing(pyenv_root() / "versions"):
        m = re.fullmatch(r"(\d+)\.(\d+)\.\d+", d.name)
        if m:
            versions.add(f"{m.group(1)}.{m.group(2)}")
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(r"python(\d+)\.(\d+)", name)
            if m:
                versions.add(f"{m.group(1)}.{m.group(2)}")
    uv = _uv_bin()
    if uv is not None:
        try:
            proc = subprocess.run([uv, "python", "list", "--only-installed", "--no-python-downloads",
                                   "--no-config"], capture_output=True, text=True, cwd="/", timeout=60,
                                  env=_uv_env(), stdin=subprocess.DEVNULL)
            versions.update(f"{a}.{b}" for a, b in re.findall(r"cpython-(\d+)\.(\d+)\.", proc.stdout))
        except (OSError, subprocess.SubprocessError):
            pass
    return versions


def list_interpreters() -> list[Interpreter]:
    """Every Python version available here (one interpreter per 'X.Y', as find_interpreter picks it)."""
    found = []
    for version in _known_versions():
        try:
            found.append(find_interpreter(version))
        except EnvBuildError:
            continue
    return sorted(found, key=lambda i: i.version_tuple)


def main(argv: list[str] | None = None) -> int:
    """``python -m sweworld.envs.discovery X.Y``: print the interpreter's path (the Makefile's 3.12 one)."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m sweworld.envs.discovery X.Y", file=sys.stderr)
        return 2
    try:
        print(find_interpreter(args[0]).path)
    except EnvBuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
