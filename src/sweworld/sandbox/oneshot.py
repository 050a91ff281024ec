"""A one-shot isolated Python: the command prefix of a process with no network, a read-only view of
the machine and its own ``/tmp``, the sandbox's interpreter at its end.

``probe_command()`` is what the SWR's behaviour probe runs its program under
(``surrogates.swr.behaviour``: the program follows as ``-I -S -c TEXT``). The surrogates do not open
sandboxes themselves (``.importlinter``): whoever may (a benchmark, the CLI, a backend) builds this
command and hands it over. ``SandboxError`` when bwrap is missing.

As for episodes, nothing of the host reaches the program through bubblewrap's own processes: they
start with ``LAUNCH_ENV`` only (``env -i``), and bubblewrap reads its arguments, which name host
paths, from a file of the cache (``--args``), so its first process's command line shows none.
"""

from __future__ import annotations

import hashlib
import os
import shlex

from sweworld.core import paths
from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.isolation import LAUNCH_ENV, Layout, bwrap_args, episode_filter, server_python


def _cached(data: bytes) -> str:
    """A file of the cache holding ``data`` (named by its hash: written once)."""
    path = paths.subdir("sandbox-args") / hashlib.sha256(data).hexdigest()[:16]
    if not path.is_file():
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return shlex.quote(str(path))


def probe_command() -> list[str]:
    """See the module docstring. The program runs under the episodes' seccomp filter too."""
    config = SandboxConfig()
    args = bwrap_args(Layout(workdir="/"), config)
    program = episode_filter(config)
    if program is not None:
        args += ["--seccomp", "4"]
    data = b"".join(arg.encode() + b"\0" for arg in args[1:])
    stage = f'exec {shlex.quote(args[0])} --args 3 -- "$@" 3< {_cached(data)}'
    if program is not None:
        stage += f" 4< {_cached(program)}"
    return ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in LAUNCH_ENV.items()),
            "/bin/sh", "-c", stage, "sweworld-probe", server_python()]
