"""A one-shot isolated Python: the command prefix of a process with no network, a read-only view of
the machine and its own ``/tmp``, the sandbox's interpreter at its end.

``probe_command()`` is what the SWR's behaviour probe runs its program under
(``surrogates.swr.behaviour``: the program follows as ``-I -S -c TEXT``). The surrogates do not open
sandboxes themselves (``.importlinter``): whoever may (a benchmark, the CLI, a backend) builds this
command and hands it over. ``SandboxError`` when bwrap is missing.
"""

from __future__ import annotations

from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.isolation import Layout, bwrap_args, server_python


def probe_command() -> list[str]:
    """See the module docstring."""
    return [*bwrap_args(Layout(workdir="/"), SandboxConfig()), "--", server_python()]
