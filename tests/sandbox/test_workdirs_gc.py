"""Episode directories of dead processes are swept; ``sweworld env gc`` removes them and, with
``--older-than``, environments and base trees nothing used for that long.

Owners are real processes killed with SIGKILL; every test has its own ``$SWEWORLD_HOME``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sweworld.cli.app import app
from sweworld.sandbox import workdirs
from sweworld.usage import mark_used

DAY = 86400


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "home"
    monkeypatch.setenv("SWEWORLD_HOME", str(root))
    return root


def killed_owner(code: str, *args: str) -> Path:
    """Run ``code`` (it prints a path, then waits) in a real process, SIGKILL it; returns the path."""
    proc = subprocess.Popen([sys.executable, "-c", code + "\nprint(path, flush=True)\nsys.stdin.read()", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    path = Path(proc.stdout.readline().strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return path


CREATE = "import sys\nfrom sweworld.sandbox import workdirs\npath = workdirs.create()"


def gc(*args: str):
    result = CliRunner().invoke(app, ["env", "gc", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_gc_removes_the_episode_of_a_killed_process_and_keeps_live_ones(home):
    live = workdirs.create()  # (this process's first episode here: it sweeps, and finds nothing yet)
    dead = killed_owner(CREATE)
    assert dead.is_dir() and json.loads((dead / "owner.json").read_text())["pid"] != os.getpid()
    listed = gc("--dry-run")
    assert f"would remove episode {dead} (owner pid" in listed and str(live) not in listed
    assert dead.is_dir()
    assert f"removed episode {dead}" in gc()
    assert not dead.exists() and live.is_dir()
    assert gc().strip() == "nothing to remove"


def test_a_reused_pid_is_not_the_owner_and_another_pid_namespace_is_left_alone():
    mine = workdirs.owner_record()
    assert workdirs.owner_state(mine) == "alive"
    assert workdirs.owner_state({**mine, "start_time": str(int(mine["start_time"]) + 1)}) == "gone"
    assert workdirs.owner_state({**mine, "pid_ns": "pid:[1]"}) == "unknown"
    assert workdirs.owner_state({**mine, "boot_id": "another-boot"}) == "gone"


def test_kept_episodes_wait_for_older_than(home):
    kept = killed_owner("import sys\nfrom sweworld.sandbox import workdirs\npath = workdirs.create(keep=True)")
    assert "nothing to remove" in gc()
    owner = json.loads((kept / "owner.json").read_text())
    (kept / "owner.json").write_text(json.dumps({**owner, "created": time.time() - 8 * DAY}))
    assert f"removed episode {kept} (kept episode" in gc("--older-than", "7d")


def fake_env(home: Path, key: str, age_days: float) -> Path:
    env = home / "envs" / key
    (env / "venv").mkdir(parents=True)
    (env / "env.json").write_text('{"complete": true}')
    (home / "envs/logs").mkdir(parents=True, exist_ok=True)
    (home / "envs/logs" / f"{key}.log").write_text("built\n")
    return aged(env, age_days)


def fake_tree(home: Path, name: str, age_days: float) -> Path:
    tree = home / "repos/trees/org__repo" / name
    (tree / ".git").mkdir(parents=True)
    return aged(tree, age_days)


def aged(path: Path, days: float) -> Path:
    then = time.time() - days * DAY
    os.utime(path, (then, then))
    return path


def test_gc_older_than_removes_unused_environments_and_trees_only(home):
    old_env, new_env = fake_env(home, "old0env", 10), fake_env(home, "new0env", 1)
    old_tree, used_tree, new_tree = fake_tree(home, "a" * 40, 10), fake_tree(home, "b" * 40, 10), fake_tree(home, "c" * 40, 1)
    stamped_env = fake_env(home, "stamped", 10)
    mark_used(stamped_env)  # built long ago, used today
    workdirs.create([str(used_tree)])  # a live episode mounts it
    listed = gc("--older-than", "7d", "--dry-run")
    assert f"would remove environment {old_env} (unused for 10.0 days)" in listed
    assert f"would remove tree {old_tree}" in listed
    for kept in (new_env, stamped_env, used_tree, new_tree):
        assert str(kept) not in listed
    assert old_env.is_dir() and old_tree.is_dir()
    removed = gc("--older-than", "7d")
    assert "2 items removed" in removed
    assert not old_env.exists() and not old_tree.exists() and not (home / "envs/logs/old0env.log").exists()
    assert all(p.is_dir() for p in (new_env, stamped_env, used_tree, new_tree))


@pytest.mark.parametrize("bad", ["7", "7y", "d", "-1d"])
def test_gc_refuses_an_age_it_cannot_read(home, bad):
    result = CliRunner().invoke(app, ["env", "gc", "--older-than", bad])
    assert result.exit_code == 2 and "--older-than" in result.output


SANDBOX = ("import sys\nfrom pathlib import Path\nfrom sweworld.sandbox import Layers, Sandbox\n"
           "sb = Sandbox({'/testbed': Layers([Path(sys.argv[1])])}, base_commit=sys.argv[2])\n"
           "sb.run('true')\n"  # the start runs in the background: its state exists once a command ran
           "path = sb.episode_dir\n")


@pytest.mark.bwrap
def test_the_next_sandbox_sweeps_the_episode_of_a_sigkilled_sandbox_process(home, small_tree):
    tree, commit = small_tree
    orphan = killed_owner(SANDBOX, str(tree), commit)
    assert (orphan / "owner.json").exists() and (orphan / "tmp/.sweworld/config").exists()
    from sweworld.sandbox import Layers, Sandbox
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        assert sb.run("cat README").output == "small tree\n"
    assert not orphan.exists()
    assert list((home / "episodes").iterdir()) == []


@pytest.mark.bwrap
def test_a_sandbox_never_closed_removes_its_directory_at_exit_and_when_collected(home, small_tree):
    tree, commit = small_tree
    done = subprocess.run([sys.executable, "-c", SANDBOX + "print(path)", str(tree), commit],
                          capture_output=True, text=True, check=True)
    assert not Path(done.stdout.strip()).exists()
    import gc as collector

    from sweworld.sandbox import Layers, Sandbox
    sb = Sandbox({"/testbed": Layers([tree])}, base_commit=commit)
    path = sb.episode_dir
    del sb
    collector.collect()
    assert not path.exists()
