"""A pyenv this user cannot read (a shared install closed to them) is skipped with one line, never a
traceback: discovery goes on with uv and PATH.

Root reads every directory, so as root the check runs in a user namespace of its own
(``unshare --user``): still uid 0 on the host's files, but without the capabilities that bypass
their permission bits, as an ordinary user is."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_CHECK = """
import json, os, sys
from sweworld.envs import discovery
own = "%d.%d" % sys.version_info[:2]
found = {}
for root in sys.argv[1:]:
    os.environ["PYENV_ROOT"] = root
    discovery.clear_cache()
    try:
        discovery.find_interpreter("9.8")
    except discovery.EnvBuildError as exc:
        missing = exc.message.splitlines()[0]
    found[root] = [discovery.find_interpreter(own).found_by, sorted(discovery._known_versions()), missing]
print(json.dumps(found))
"""


def _as_ordinary_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--user", "true"], capture_output=True).returncode != 0:
        pytest.skip("as root this check needs a user namespace (unshare --user), refused here")
    return [unshare, "--user", *argv]


def test_an_unreadable_pyenv_root_or_version_is_skipped_with_one_line(tmp_path: Path) -> None:
    closed = tmp_path / "shared-pyenv"  # the whole root closed to this user
    (closed / "versions" / "9.8.6" / "bin").mkdir(parents=True)
    partly = tmp_path / "own-pyenv"  # a readable root, one version directory of it closed
    (partly / "versions" / "9.8.7" / "bin").mkdir(parents=True)
    own = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (tmp_path / "bin").mkdir()  # this interpreter on PATH: another source that must still be searched
    (tmp_path / "bin" / f"python{own}").symlink_to(os.path.realpath(sys.executable))
    (tmp_path / "user").mkdir()  # the user's home: discovery writes nothing there (uv's cache included)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": str(tmp_path / "user"), "SWEWORLD_HOME": str(tmp_path / "sweworld")}
    env.pop("XDG_CACHE_HOME", None)
    for shut in (closed, partly / "versions" / "9.8.7"):
        shut.chmod(0)
    try:
        done = subprocess.run(_as_ordinary_user([sys.executable, "-c", _CHECK, str(closed), str(partly)]),
                              capture_output=True, text=True, env=env)
    finally:
        for shut in (closed, partly / "versions" / "9.8.7"):
            shut.chmod(0o755)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    found = json.loads(done.stdout)
    for root in (closed, partly):  # found by uv or on PATH all the same
        by, versions, missing = found[str(root)]
        assert by in ("uv", "PATH") and own in versions and missing == "no Python 9.8 interpreter found; looked "\
            f"at: `uv python find --no-python-downloads --system 9.8`; {root / 'versions'}/9.8.*/bin/python9.8; "\
            "python9.8 on PATH"
    assert list((tmp_path / "user").iterdir()) == []
    lines = [line for line in done.stderr.splitlines() if "cannot read" in line]
    assert len(lines) == 2, done.stderr  # one per place, however often it was looked at
    assert f"cannot read {closed / 'versions'}" in lines[0] and "Permission denied" in lines[0]
    assert f"cannot read {partly / 'versions' / '9.8.7'}" in lines[1] and "PYENV_ROOT" in lines[1]
