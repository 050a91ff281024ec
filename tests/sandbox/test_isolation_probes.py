"""The isolation probes every framework seam is checked with can fail: without isolation they report
what leaks; with it, nothing."""

from __future__ import annotations

import subprocess

import pytest

from sweworld.sandbox import Layers, Sandbox, SandboxConfig
from sweworld.testing.isolation import PROBES, SECRET_VARIABLE, check_isolation

pytestmark = pytest.mark.bwrap


def _run(sb):
    return lambda command: (lambda r: (r.exit_code, r.output))(sb.run(command, timeout=60))


def test_the_probes_see_an_unisolated_episode_leak(small_tree):
    tree, commit = small_tree
    leaky = SandboxConfig(isolation="none", memory=None, file_size=None, passthrough_env=[SECRET_VARIABLE])
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=leaky) as sb:
        broken = check_isolation(_run(sb))
    assert any(b.startswith("network") for b in broken), broken
    assert any(b.startswith("host files") for b in broken), broken
    assert any(b.startswith("host processes") for b in broken), broken
    assert any(b.startswith("limits") for b in broken), broken
    assert any(SECRET_VARIABLE in b for b in broken), broken  # the planted secret, passed to the shell
    assert any(b.startswith("confinement") for b in broken), broken
    assert any(b.startswith("system calls") and "CLONE_NEWUSER" in b for b in broken), broken  # no filter


def test_the_keyring_and_system_call_probes_see_the_host_itself():
    """Run on the host (no episode at all), the launcher's keyring is read and written, and a nested
    user namespace is made: what the fresh session keyring and the seccomp filter take away."""
    def on_host(command: str) -> tuple[int, str]:
        proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout + proc.stderr
    broken = check_isolation(on_host, skip=tuple(set(PROBES) - {"keyring", "syscalls"}))
    assert any("session key" in b and "read" in b for b in broken), broken
    assert any("added a key" in b for b in broken), broken
    assert any(b.startswith("system calls") and "keyctl" in b for b in broken), broken


def test_the_probes_find_nothing_in_an_isolated_episode(sandbox):
    assert check_isolation(_run(sandbox)) == []
