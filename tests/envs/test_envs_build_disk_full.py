"""A build that fails for want of disk says so in its first line, and what to do (issue 50's full
disk: ``/dev/full`` answers every write with ENOSPC, as a full file system does)."""

from __future__ import annotations

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.envs.build import _run_script

pytestmark = pytest.mark.bwrap


def test_a_build_out_of_disk_names_the_full_disk_and_the_fix(sandbox, tmp_path):
    log = tmp_path / "build.log"
    with pytest.raises(EnvBuildError) as raised:
        _run_script(sandbox, "echo wheel > /dev/full", log, "install", "instance x (env k)", 60)
    error = raised.value
    assert error.message.splitlines()[0].endswith("install exited with status 1 (No space left on device)")
    assert str(log) in error.message
    assert "the disk is full" in (error.hint or "") and "SWEWORLD_HOME" in (error.hint or "")
    assert "No space left on device" in log.read_text()


def test_any_other_failed_build_keeps_its_hint(sandbox, tmp_path):
    with pytest.raises(EnvBuildError) as raised:
        _run_script(sandbox, "exit 3", tmp_path / "build.log", "install", "instance x (env k)", 60)
    assert raised.value.message.splitlines()[0].endswith("install exited with status 3")
    assert "the disk is full" not in (raised.value.hint or "") and "install fields" in (raised.value.hint or "")
