"""Locked-down hosts, simulated on this one: each gives one clear error naming the cause and the fix,
or a fallback that keeps the isolation; never a traceback, never a silent run without isolation.

- no user namespace left: a real nested user namespace whose ``max_user_namespaces`` is spent, the
  user in it mapped to uid 1000 (no root there);
- AppArmor's restriction (Ubuntu >= 23.10): ``unshare`` answering as it does there, with the host
  setting read as there;
- overlay mounts refused: ``mount`` refusing overlays in the mount stage;
- a setuid-root bubblewrap on a host without user namespaces (root only: the setuid copy).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from localtask import local_dataset
from sweworld.core.errors import SandboxError
from sweworld.sandbox import Layers, Sandbox, SandboxConfig, diagnose, isolation, route
from sweworld.testing.isolation import check_isolation

pytestmark = pytest.mark.bwrap

NESTED = ("echo 1 > /proc/sys/user/max_user_namespaces && "
          "exec unshare --user --map-user=1000 --map-group=1000 -- \"$@\"")
OPEN = ("import sys\nfrom pathlib import Path\nfrom sweworld.sandbox import Layers, Sandbox\n"
        "with Sandbox({'/testbed': Layers([Path(sys.argv[1])])}) as sb:\n    print(sb.run('echo inside').output)\n")


def nested(*argv: str, home: Path) -> subprocess.CompletedProcess:
    """``argv`` as uid 1000 in a user namespace whose parent allows no further one."""
    env = {**os.environ, "SWEWORLD_HOME": str(home)}
    return subprocess.run(["unshare", "--user", "--map-root-user", "--", "/bin/sh", "-c", NESTED, "nested", *argv],
                          capture_output=True, text=True, env=env, timeout=600)


def run_of(sb):
    return lambda command: (lambda r: (r.exit_code, r.output))(sb.run(command, timeout=60))


@pytest.fixture
def fresh_probes():
    """Route and overlay support are probed once per process: probed afresh around a simulation."""
    route.route.cache_clear()
    isolation.overlay_support.cache_clear()
    yield
    route.route.cache_clear()
    isolation.overlay_support.cache_clear()


def fake_tools(tmp_path: Path, **scripts: str) -> Path:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    for name, body in scripts.items():
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\n" + body + "\n")
        tool.chmod(0o755)
    return bin_dir


def test_no_user_namespace_left_is_one_clear_error_with_the_fix(small_tree, tmp_path):
    tree, _ = small_tree
    opened = nested(sys.executable, "-c", OPEN, str(tree), home=tmp_path / "home")
    assert opened.returncode == 1 and "Traceback" in opened.stderr  # the library raises...
    error = opened.stderr.strip().splitlines()
    assert any("SandboxError: this host cannot isolate an episode: no user namespace is left to create" in line
               for line in error), opened.stderr
    assert "user.max_user_namespaces" in opened.stderr and "sysctl -w user.max_user_namespaces" in opened.stderr

    doctor = nested(sys.executable, "-m", "sweworld.cli.app", "doctor", "--json", home=tmp_path / "home")
    assert doctor.returncode == 1, doctor.stderr
    report = json.loads(doctor.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["isolated"] is False and checks["user namespaces"]["ok"] is False
    assert "no user namespace is left" in checks["user namespaces"]["detail"]
    assert "sysctl -w user.max_user_namespaces" in checks["user namespaces"]["fix"]
    assert "setuid-bwrap route" in checks["user namespaces"]["fix"] and "setuid-bwrap route" in checks["route"]["fix"]
    assert checks["user"]["detail"].endswith("(uid 1000, no root)")

    cli = nested(sys.executable, "-m", "sweworld.cli.app", "exec", "--dataset", str(local_dataset(tree, tmp_path)),
                 "--instance", "local__tree-1", "--", "true", home=tmp_path / "home")
    assert cli.returncode != 0 and "Traceback" not in cli.stderr + cli.stdout  # ...the CLI says it in one error
    assert "no user namespace is left to create" in cli.stderr + cli.stdout
    assert "sysctl -w user.max_user_namespaces" in cli.stderr + cli.stdout


def test_apparmors_restriction_is_named_with_the_profile_to_install(small_tree, tmp_path, monkeypatch, fresh_probes):
    tree, _ = small_tree
    fake = fake_tools(tmp_path, unshare="echo 'unshare: write failed /proc/self/uid_map: Operation not permitted' >&2; "
                                        "exit 1")
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    real_sysctl = diagnose.sysctl
    monkeypatch.setattr(diagnose, "sysctl", lambda name: "1" if name == "kernel.apparmor_restrict_unprivileged_userns"
                        else real_sysctl(name))
    assert route.route().kind == "none"
    with pytest.raises(SandboxError) as raised:
        Sandbox({"/testbed": Layers([tree])})
    assert "AppArmor restricts unprivileged user namespaces" in raised.value.message
    assert "apparmor" in (raised.value.hint or "").lower() and "apparmor_restrict_unprivileged_userns=0" in raised.value.hint
    assert "userns," in diagnose.APPARMOR_PROFILE


def test_refused_overlays_fall_back_to_copies_that_keep_the_isolation(small_tree, tmp_path, monkeypatch, fresh_probes):
    tree, commit = small_tree
    fake = fake_tools(tmp_path, mount='case "$*" in *overlay*) echo "mount: $3: permission denied." >&2; exit 32;; '
                                     'esac; exec /usr/bin/mount "$@"')
    monkeypatch.setitem(isolation.LAUNCH_ENV, "PATH", f"{fake}:{isolation.LAUNCH_ENV['PATH']}")
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        assert sb.info["workspace"] == "copy" and sb.info["route"] == "userns"
        assert sb.run("cat README").output == "small tree\n"
        assert check_isolation(run_of(sb), skip=("cache_paths",)) == []  # a copy is bound: its path shows
    with pytest.raises(SandboxError) as raised:
        Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=SandboxConfig(workspace="overlay")).run("true")
    assert "refuses overlay mounts" in raised.value.message and "'auto'" in (raised.value.hint or "")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a setuid-root copy of bubblewrap needs root")
def test_a_setuid_bubblewrap_is_the_route_where_user_namespaces_are_refused(small_tree, tmp_path, monkeypatch,
                                                                            fresh_probes):
    tree, commit = small_tree
    fake = fake_tools(tmp_path, unshare="echo 'unshare: unshare failed: No space left on device' >&2; exit 1")
    shutil.copy2(shutil.which("bwrap"), fake / "bwrap")
    (fake / "bwrap").chmod(0o755 | stat.S_ISUID)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    chosen = route.route()
    assert chosen.kind == "setuid-bwrap" and "setuid root" in chosen.why and "no user namespace" in chosen.why
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        assert sb.info["route"] == "setuid-bwrap" and sb.info["workspace"] == "copy"
        assert sb.run("echo x > new && cat README").output == "small tree\n"
        assert "new" in sb.diff()
        assert check_isolation(run_of(sb), skip=("cache_paths",)) == []  # a copy is bound: its path shows
    assert not (tree / "new").exists()
