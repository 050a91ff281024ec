"""Nothing of the host inside an episode, attacked the way an agent would: a secret planted in the
launching process's environment (``conftest``: ``SWEWORLD_PROBE_SECRET``) and sweworld's cache paths
are nowhere in the episode's ``/proc``; the episode cannot reach its server's pipes, signal it,
remount what it sees read-only or write the host's sysctls. As root and as an ordinary user (the
CI runs this module both ways)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sweworld.sandbox import Layers, Sandbox
from sweworld.testing.isolation import SECRET_VARIABLE

pytestmark = pytest.mark.bwrap

EVERY_PROC = ("for p in /proc/[0-9]*; do for f in environ cmdline mountinfo; do tr '\\0' '\\n' < $p/$f 2>/dev/null; "
              "done; for fd in $p/fd/*; do readlink $fd 2>/dev/null; done; done; cat /proc/self/mountinfo")


def _home() -> str:
    return os.path.realpath(os.environ["SWEWORLD_HOME"])


def test_the_planted_secret_and_the_cache_paths_are_nowhere_in_the_episodes_proc(sandbox):
    seen = sandbox.run(EVERY_PROC).output
    assert os.environ[SECRET_VARIABLE] not in seen
    assert _home() not in seen and str(sandbox.episode_dir) not in seen
    assert "overlay" in seen  # what is read is mountinfo indeed: the workspace's overlay
    assert "lowerdir=l/" in seen  # its layers are named by links of the episode, never by their paths



def test_the_tools_an_episode_is_given_show_no_host_path(small_tree):
    """``uv``, mounted for an environment's scripts, is a directory of sweworld's home holding it
    alone (an overlay): neither the package's own path of the binary nor the home shows."""
    from sweworld.envs.build import UV_IN_SANDBOX, tool_mounts, uv_binary
    uv = uv_binary()
    if uv is None:
        pytest.skip("the uv package is not installed in this environment")
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree]), **tool_mounts(uv)}, base_commit=commit) as sb:
        seen = sb.run(EVERY_PROC).output
        assert str(uv.parent) not in seen and _home() not in seen
        assert sb.run(f"{UV_IN_SANDBOX} --version").output.startswith("uv ")

def test_the_server_is_pid_1_out_of_reach_and_unkillable(sandbox):
    out = sandbox.run("cat /proc/1/environ >/dev/null 2>&1 || echo NO-ENVIRON; readlink /proc/1/fd/1 >/dev/null 2>&1 "
                      "|| echo NO-FDS; echo x > /proc/1/fd/1 2>/dev/null || echo NO-WRITE; kill -9 1; "
                      "sleep 0.2; echo ALIVE").output
    assert "NO-ENVIRON" in out and "NO-FDS" in out and "NO-WRITE" in out and "ALIVE" in out
    assert sandbox.ping()["undumpable"] == b"1"
    assert sandbox.run("echo still").output == "still\n"


def test_no_host_file_is_open_for_writing_in_the_episode(sandbox):
    links = sandbox.run("for p in /proc/[0-9]*; do for fd in $p/fd/*; do readlink $fd; done; done 2>/dev/null").output
    assert not [line for line in links.splitlines() if line.startswith("/") and "sandbox.log" in line]
    assert not [line for line in links.splitlines() if _home() in line]


def test_read_only_stays_read_only_and_the_hosts_sysctls_are_out_of_reach(small_tree):
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        out = sb.run("mount -o remount,bind,rw /usr 2>&1; touch /usr/sweworld-escape 2>&1; "
                     "echo 1 > /proc/sys/vm/drop_caches 2>&1; [ -w /proc/sys/kernel/core_pattern ] || echo RO; "
                     "grep ^CapEff /proc/self/status").output
    assert not Path("/usr/sweworld-escape").exists()
    assert "RO" in out and "Read-only file system" in out
    cap_eff = int(out.split("CapEff:")[1].split()[0], 16)
    assert not cap_eff & (1 << 21), out  # no CAP_SYS_ADMIN
    assert cap_eff & (1 << 1)  # CAP_DAC_OVERRIDE, as a container's root has


def test_sweworld_exec_shows_an_agent_no_secret_and_no_cache_path(small_tree, tmp_path):
    """The CLI route, in a process of its own that inherits the planted secret."""
    from localtask import local_dataset
    dataset = local_dataset(small_tree[0], tmp_path)
    done = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "exec", "--dataset", str(dataset), "--instance",
                           "local__tree-1", "--", EVERY_PROC], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "overlay" in done.stdout
    assert os.environ[SECRET_VARIABLE] not in done.stdout and _home() not in done.stdout


def test_sweworld_exec_reaches_no_key_of_the_launcher_and_makes_no_user_namespace(small_tree, tmp_path):
    """The CLI route, in a process of its own that inherits the session keyring a key was planted in."""
    import shlex
    import uuid

    from localtask import local_dataset
    from sweworld.testing import keyring
    dataset = local_dataset(small_tree[0], tmp_path)
    token, name = uuid.uuid4().hex, f"sweworld-cli-{uuid.uuid4().hex[:8]}"
    serial = keyring.plant(name, token)
    if serial <= 0:
        pytest.skip("this kernel keeps no keys")
    try:
        command = (f"python3 -c {shlex.quote(keyring.INSIDE)} {name} {name}-added; "
                   "unshare -Ur true && echo NESTED-USERNS; true")
        done = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "exec", "--dataset", str(dataset),
                               "--instance", "local__tree-1", "--", command], capture_output=True, text=True, timeout=900)
        added = keyring.find(f"{name}-added")
    finally:
        keyring.revoke(serial)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "KEYRING-PROBE" in done.stdout and token not in done.stdout and added <= 0
    assert "NESTED-USERNS" not in done.stdout
