"""The in-sandbox server's interpreter in an episode whose ``/`` is an image.

The server is the host's Python (``isolation.server_python``), run isolated (``-I -S``) with the
standard library only. Over the host's system directories it runs as it is; over an image it
cannot rely on the image's dynamic loader and C library (older or absent), so it brings its own:
its installation and the host directories of the libraries it links are bound read-only under
``/sweworld/host`` and it is started through the host's dynamic loader with ``--library-path``.
Nothing of this reaches the episode's commands: they are the image's programs, started with the
image's own loader and no library path set.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import SandboxError

HOST = "/sweworld/host"
_LIB = re.compile(r"=>\s+(/\S+)\s+\(0x")
_LOADER = re.compile(r"^\s*(/\S+)\s+\(0x")


@dataclass(frozen=True)
class Runtime:
    """``binds``: host directory -> where the episode sees it; ``argv``: how the server's Python starts."""

    binds: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]


def _prefix(python: str) -> Path:
    for candidate in (Path(sys.base_prefix).resolve(), Path(python).parent.parent):
        if Path(python).is_relative_to(candidate):
            return candidate
    return Path(python).parent.parent


@functools.cache
def runtime(python: str) -> Runtime:
    """How ``python`` (a real path) runs over an image (probed once per interpreter)."""
    try:
        listed = subprocess.run(["ldd", python], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot list the libraries of {python} (ldd): {exc}",
                           hint="install libc-bin (ldd), or run the episode over the host's system") from exc
    libs = [m.group(1) for line in listed.splitlines() if (m := _LIB.search(line))]
    loaders = [m.group(1) for line in listed.splitlines() if (m := _LOADER.match(line))]
    if not loaders:
        raise SandboxError(f"{python} names no dynamic loader (ldd): a static interpreter is not supported here")
    loader = os.path.realpath(loaders[0])
    prefix = _prefix(python)
    dirs: list[str] = []
    for lib in [loader, *libs]:
        folder = os.path.dirname(os.path.realpath(lib))
        if folder not in dirs:
            dirs.append(folder)
    binds = [(str(prefix), f"{HOST}/python"), *((d, f"{HOST}/lib{n}") for n, d in enumerate(dirs))]
    inside = [f"{HOST}/lib{n}" for n in range(len(dirs))]
    where = dirs.index(os.path.dirname(loader))
    argv = (f"{HOST}/lib{where}/{os.path.basename(loader)}", "--library-path", ":".join(inside),
            f"{HOST}/python/{Path(python).relative_to(prefix)}")
    return Runtime(tuple(binds), argv)
