"""``sweworld env pull|ls|rm|gc`` on images, as a user types them."""

from __future__ import annotations

import os
import subprocess
import sys


def _sweworld(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sweworld.cli.app", "env", *args], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=600)


def test_pull_list_remove_and_collect_from_the_command_line(store_home, registry):
    name = f"{registry.address}/team/derived:1"
    pulled = _sweworld("pull", name, f"{registry.address}/team/derived:missing")
    assert pulled.returncode == 1  # one of the two failed; the other is in the store
    assert f"ok {name}" in pulled.stdout and "layers=2" in pulled.stdout
    assert "no such repository or tag" in pulled.stdout
    listed = _sweworld("ls").stdout
    assert name in listed and "/opt" in listed
    key = next(line.split("\t")[0] for line in listed.splitlines() if name in line)
    assert "would remove" not in _sweworld("gc", "--dry-run").stdout  # everything is held
    assert _sweworld("rm", key).returncode == 0 and name not in _sweworld("ls").stdout
    assert "would remove 2 image layers" in _sweworld("gc", "--dry-run").stdout
    assert "removed 2 image layers" in _sweworld("gc").stdout
    assert "image layers" not in _sweworld("gc").stdout
