"""A pull, and a failed one, write nothing outside ``$SWEWORLD_HOME``: skopeo's blob-info cache goes
neither to ``~/.local/share/containers`` (an ordinary user) nor to ``/var/lib/containers`` (root).

Each pull runs in a child process: as root, in a private mount namespace whose ``/var/lib`` is a fresh
tmpfs (so that the check sees this test's writes alone), and again in a user namespace of its own
(no mapping: an ordinary user's euid, the rootless path); as an ordinary user, as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

_PULL = """
import sys
from sweworld.core.errors import ImageError
from sweworld.oci.pull import pull
pull(sys.argv[1])
try:
    pull(sys.argv[2])
except ImageError as exc:
    print("failed:", exc.message)
"""
_WATCHED = 'mount -t tmpfs sweworld-test /var/lib; "$@"; echo "/var/lib holds:"; find /var/lib -mindepth 1'


def _routes() -> list[tuple[str, list[str]]]:
    if os.geteuid() != 0:
        return [("ordinary user", [])]
    if shutil.which("unshare") is None or subprocess.run(["unshare", "--mount", "--user", "true"]).returncode:
        pytest.skip("as root this check needs mount and user namespaces (unshare), refused here")
    return [("root", ["unshare", "--mount", "--propagation", "private", "sh", "-ec", _WATCHED, "sh"]),
            ("euid not 0", ["unshare", "--user"])]


def test_a_pull_and_a_failed_pull_write_nothing_outside_the_store(store_home, registry, tmp_path):
    for route, prefix in _routes():
        home = tmp_path / route.replace(" ", "-")
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "SWEWORLD_HOME": str(home / "sweworld")}
        env.pop("XDG_DATA_HOME", None)
        argv = [sys.executable, "-c", _PULL, f"{registry.address}/team/derived:1",
                f"{registry.address}/team/derived:missing"]
        done = subprocess.run([*prefix, *argv], env=env, capture_output=True, text=True)
        assert done.returncode == 0, (route, done.stderr)
        out = done.stdout.splitlines()
        assert out[0].startswith("failed: the registry has no such repository or tag"), (route, out)
        assert out[1:] in ([], ["/var/lib holds:"]), (route, out)  # root's cache directory was not made
        assert sorted(p.name for p in home.iterdir()) == ["sweworld"], route  # nor the user's
        cache = home / "sweworld" / "images" / "xdg-data" / "containers" / "cache"
        assert cache.is_dir() == (route != "root"), route  # an ordinary user's is kept in the store
