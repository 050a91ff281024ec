"""The environment cache: one directory per environment key, one layer per installed base commit.

Layout under ``$SWEWORLD_HOME/envs``::

    <env_key>/venv/                         the shared virtualenv (seen at /sweworld/venv)
    <env_key>/env.json                      recipe, repo, commit, interpreter, timings
    logs/<env_key>.log                      the whole build output (kept when a build fails)
    <env_key>/logs/<inst_key>.log           the install output
    <env_key>/instances/<inst_key>/testbed  copy-on-write layer over the base tree (install artefacts)
    <env_key>/instances/<inst_key>/venv     copy-on-write layer over the venv (the editable install)
    <env_key>/instances/<inst_key>/meta.json
    locks/<key>.lock                        so two workers never build the same thing

A directory is published by an atomic rename once complete, so a crash never leaves half an env.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from sweworld.core import paths
from sweworld.core.errors import EnvBuildError
from sweworld.core.paths import remove_tree


def envs_root() -> Path:
    return paths.subdir("envs")


@contextmanager
def locked(key: str) -> Iterator[None]:
    lock_dir = envs_root() / "locks"
    lock_dir.mkdir(exist_ok=True)
    with FileLock(str(lock_dir / f"{key}.lock")):
        yield


def read_meta(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def log_tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


_ERROR = re.compile(r"^\s*(?:npm error (?:code |notarget |404 Not Found|ERESOLVE|\S+ )|ERROR:|error:|E\s{2,}|"
                    r"fatal error:|FATAL:|× |╰─▶ |\S+Error: |\S+: fatal error: |"
                    r"Could not |No matching distribution|Because )", re.IGNORECASE)
_GENERIC = re.compile(r"subprocess-exited-with-error|metadata-generation-failed|Failed building wheel|"
                      r"failed-wheel-build|Failed to build installable wheels|legacy-install-failure|did not run successfully|"
                      r"This error originates from a subprocess|See above for output|Command errored out|"
                      r"^\s*× (?:Failed to (?:build|download)|No solution found)|exit code: \d+|^\s*error: command|"
                      r"npm error (?:A complete log|code \w+$|404\s*$|notarget In most cases)",
                      re.IGNORECASE)


def error_line(log: Path) -> str:
    """The one line of a failed build's log that says why: the first specific error of the last
    step's output (pip's ``ERROR: ...``, uv's ``╰─▶ Because ...``, a compiler's ``fatal error``, an
    exception), past the generic ones (``subprocess-exited-with-error``...); else its last line."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    lines = [line.rstrip() for line in text.rsplit("### output:\n", 1)[-1].splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR.match(line)]
    specific = [line for line in errors if not _GENERIC.search(line)]
    found = (specific or errors or lines[-1:] or [""])[0].strip()
    return found if len(found) <= 200 else found[:197] + "..."


def list_envs() -> list[dict]:
    """Every complete environment with its metadata and disk size."""
    found = []
    for meta_path in sorted(envs_root().glob("*/env.json")):
        meta = read_meta(meta_path)
        meta["path"] = str(meta_path.parent)
        meta["instances"] = len(list((meta_path.parent / "instances").glob("*/meta.json")))
        meta["size_bytes"] = disk_usage(meta_path.parent)
        found.append(meta)
    return found


def remove_env(key: str) -> Path:
    """Delete one environment (prefix of its key accepted when unambiguous)."""
    matches = [p for p in envs_root().iterdir()
               if (p / "env.json").is_file() and p.name.startswith(key) and not p.name.startswith(".")]
    if len(matches) != 1:
        names = ", ".join(p.name for p in matches) or "none"
        raise EnvBuildError(f"environment key {key!r} matches {len(matches)} environments ({names})",
                            hint="run `sweworld env ls` and pass a full key")
    with locked(matches[0].name):
        remove_tree(matches[0])
    return matches[0]


def disk_usage(path: Path, seen: set[tuple[int, int]] | None = None) -> int:
    """Bytes actually allocated under ``path`` (hard links counted once); ``seen``: inodes already
    counted elsewhere (shared by calls: files linked through ``sweworld.cas`` counted where first met)."""
    seen = set() if seen is None else seen
    total = 0
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total
