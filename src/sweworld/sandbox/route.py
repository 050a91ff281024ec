"""Which way this host lets sweworld isolate an episode, decided once per process.

- ``userns`` (the usual one): unprivileged user namespaces; ``unshare`` and the mount stage, then
  bubblewrap inside; overlay workspaces where the kernel allows them, copies otherwise.
- ``setuid-bwrap``: the host refuses user namespaces to ordinary users, but an administrator
  installed bubblewrap setuid root (older HPC systems do): bubblewrap builds the namespaces itself,
  the episode runs as the user, with copy workspaces (no overlay without a user namespace).
- ``none``: neither. Opening an episode raises ``SandboxError`` naming the cause and the fix
  (``diagnose``); running unisolated stays an explicit opt-in (``--isolation none``).
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass

from sweworld.core.errors import SandboxError
from sweworld.sandbox import diagnose
from sweworld.sandbox.isolation import LAUNCH_ENV, require


@dataclass(frozen=True)
class Route:
    """How episodes are isolated here: ``kind`` (see the module docstring) and why."""

    kind: str
    why: str
    fix: str = ""

    def check(self) -> None:
        """Raise the one clear error when no route isolates episodes on this host."""
        if self.kind == "none":
            raise SandboxError(f"this host cannot isolate an episode: {self.why}",
                               hint=f"{self.fix + '; ' if self.fix else ''}`sweworld doctor` says what this host "
                               "allows; `--isolation none` runs episodes without isolation (explicit, with a warning)")


def probe_userns() -> tuple[bool, str]:
    """Whether ``unshare`` can make a user and mount namespace here; the error text when not."""
    try:
        unshare = require("unshare", "util-linux")
        proc = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "--", "/bin/true"],
                              capture_output=True, text=True, timeout=30, env=LAUNCH_ENV)
    except (OSError, subprocess.TimeoutExpired, SandboxError) as exc:
        return False, str(exc)
    if proc.returncode != 0:
        return False, (proc.stderr or proc.stdout).strip()[-500:] or f"unshare exited {proc.returncode}"
    return True, ""


@functools.cache
def route() -> Route:
    """This process's route (probed once)."""
    ok, err = probe_userns()
    if ok:
        return Route("userns", "unprivileged user namespaces")
    found = diagnose.cause(err)
    why, fix = (found.what, found.fix) if found else (err, "")
    try:
        bwrap = require("bwrap", "bubblewrap")
    except SandboxError as exc:
        return Route("none", f"{why}; and {exc.message}", fix)
    if diagnose.is_setuid(bwrap):
        return Route("setuid-bwrap", f"user namespaces are refused ({why}); {bwrap} is setuid root")
    return Route("none", why, fix)
