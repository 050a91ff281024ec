"""Wheels an episode may pip-install without a network: a frameworks' tool bundles' requirements.

Episodes have no network, and pip in them reads no index (``scripts.OFFLINE_ENV``). A framework that
pip-installs its tools into the environment (SWE-agent's bundles: ``edit_anthropic`` installs
``tree-sitter==0.21.3`` and ``tree-sitter-languages``, ``windowed_edit_linting`` installs ``flake8``)
gets its wheels from a wheelhouse instead: filled on the host once per allow-list and Python version
(``pip download --only-binary :all:`` by the environment's own interpreter, so the wheels fit it),
mounted read-only at ``MOUNT`` in each episode, and named by ``PIP_FIND_LINKS``/``UV_FIND_LINKS``.
Only what the allow-list names (and what it depends on) is there; ``wheelhouse.json`` beside the
wheels records the requirements, the interpreter and each wheel's SHA-256.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.core import paths
from sweworld.core.errors import EnvBuildError

if TYPE_CHECKING:
    from sweworld.envs.discovery import Interpreter

MOUNT = "/sweworld/wheels"
"""Where an episode sees the wheelhouse (read-only)."""
MANIFEST = "wheelhouse.json"


_NOT_PASSED = {"PYTHONPATH", "PYTHONHOME", "PIP_NO_INDEX", "PIP_REQUIRE_VIRTUALENV", "PIP_TARGET", "PIP_PREFIX",
               "PIP_USER", "PIP_FIND_LINKS"}
"""The host's variables that would change what ``pip download`` does (its index mirrors are kept)."""


def environment() -> dict[str, str]:
    """The variables that point pip and uv in an episode at the wheelhouse."""
    return {"PIP_FIND_LINKS": MOUNT, "UV_FIND_LINKS": MOUNT}


def _key(requirements: list[str], interpreter: Interpreter) -> str:
    digest = hashlib.sha256("\n".join([interpreter.full_version, *sorted(requirements)]).encode()).hexdigest()
    return f"py{interpreter.version}-{digest[:12]}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure(requirements: list[str], interpreter: Interpreter, *, root: Path | None = None) -> Path:
    """The wheelhouse of ``requirements`` for ``interpreter``'s Python, filled on first use (one
    ``EnvBuildError`` naming the requirements and what to do when pip cannot get them)."""
    requirements = sorted(dict.fromkeys(r.strip() for r in requirements if r.strip()))
    target = (root or paths.subdir("wheels")) / _key(requirements, interpreter)
    if (target / MANIFEST).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".filling-", dir=target.parent))
    try:
        command = [str(interpreter.path), "-m", "pip", "download", "--only-binary", ":all:", "--no-cache-dir",
                   "--disable-pip-version-check", "--dest", str(scratch), *requirements]
        env = {k: v for k, v in os.environ.items() if k not in _NOT_PASSED}
        done = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=900)
        if done.returncode != 0:
            raise EnvBuildError(f"pip could not download the wheels of {', '.join(requirements)} for Python "
                                f"{interpreter.full_version}: {done.stderr.strip()[-1500:]}", where=str(target),
                                hint="check the names and the host's access to the package index (or its "
                                "PIP_INDEX_URL mirror), or leave the framework's tools that need them out")
        wheels = sorted(scratch.glob("*.whl"))
        manifest = {"requirements": requirements, "python": interpreter.full_version,
                    "interpreter": interpreter.path.name, "wheels": {w.name: _sha256(w) for w in wheels}}
        (scratch / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        for path in [scratch, *scratch.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        with contextlib.suppress(OSError):  # another process filled it first: keep that one
            os.rename(scratch, target)
        return target
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def manifest(wheelhouse: Path) -> dict:
    """What ``wheelhouse`` holds (its ``wheelhouse.json``)."""
    return json.loads((wheelhouse / MANIFEST).read_text())
