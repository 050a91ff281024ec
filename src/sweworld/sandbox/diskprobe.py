"""The disk bound proved on this host, for ``sweworld doctor`` (apart from ``diskbound``, which the
sandbox itself imports)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sweworld.core.errors import SandboxError
from sweworld.sandbox.config import SandboxConfig
from sweworld.sandbox.diskbound import DiskBoundError, MiB, describe
from sweworld.sandbox.mounts import Dir
from sweworld.sandbox.sandbox import Sandbox


def doctor_check(config: SandboxConfig | None = None) -> tuple[bool | None, str, str]:
    """``(ok, detail, fix)`` for a doctor line: the bounds ``config`` (default: the defaults) gives
    every episode, proved here: an episode with a 16 MiB bound writes 64 MiB into its ``/tmp`` and
    must be ended with ``DiskBoundError``. ``ok`` None: no episode opens here (the episode check says why)."""
    config = config or SandboxConfig()
    detail = f"per episode: {describe(config.disk, config.inodes)}"
    probe = config.model_copy(update={"disk": 16 * MiB, "inodes": None, "timeout": 120.0})
    with tempfile.TemporaryDirectory(prefix="sweworld-doctor-") as tmp:
        try:
            with Sandbox({"/testbed": Dir(Path(tmp))}, config=probe, label="doctor-diskbound") as sb:
                sb.run("dd if=/dev/zero of=/tmp/fill bs=1M count=64 status=none; sleep 60", timeout=120)
        except DiskBoundError as exc:
            return True, f"{detail}; an episode writing 64 MiB past a 16 MiB bound was ended at " \
                         f"{exc.held / MiB:.0f} MiB", ""
        except SandboxError as exc:
            return None, f"{detail}; not probed: no episode opens here ({exc.message.splitlines()[0]})", \
                   "see the episode check"
    return False, f"{detail}; an episode writing 64 MiB past a 16 MiB bound was NOT ended", \
           "report this: the disk bound's watcher (sandbox/diskbound.py) did not end the episode"
