"""Snapshot, fork and restore of a live sandbox (issue 45): the conformance checks on real episodes
(overlay and copy workspaces, sim over one), the layers a fork of a fork stacks, what a restore must
put back (deleted directories, replaced ones, symlinks, modes), the disk a snapshot holds, the disk
limit, and that nothing is left once the holders are gone."""

from __future__ import annotations

import os

import pytest

from sweworld.core.errors import SnapshotError
from sweworld.core.protocols import Branchable, why_not_branchable
from sweworld.sandbox import Layers, Sandbox, workdirs
from sweworld.sandbox.config import SandboxConfig
from sweworld.testing.branching import check_branching

pytestmark = pytest.mark.bwrap


def _episodes() -> set[str]:
    """This process's episode and snapshot directories (other test workers share the root)."""
    return {p.name for p in workdirs.root().iterdir() if (workdirs.read_owner(p) or {}).get("pid") == os.getpid()}


@pytest.mark.parametrize("workspace", ["overlay", "copy"])
def test_a_fork_and_a_restored_episode_pass_the_checks(small_tree, workspace):
    tree, commit = small_tree
    before = _episodes()
    sandbox = Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=SandboxConfig(workspace=workspace))
    assert isinstance(sandbox, Branchable) and why_not_branchable(sandbox) is None
    check_branching(sandbox, workdir_file="README")
    assert _episodes() == before, "an episode or snapshot directory was left behind"


def test_a_sim_episode_branches_with_its_history(small_tree):
    from tests.backends.test_backends_seam import TASK, _NoSWT

    from sweworld.world.simexec import SimExecutor
    tree, commit = small_tree
    sim = SimExecutor(Sandbox({"/testbed": Layers([tree])}, base_commit=commit), TASK, _NoSWT())
    sim.run("echo step > one")
    handle = sim.snapshot()
    sim.run("echo later > two")
    child = sim.fork(handle)
    assert [s.command for s in child.history] == [s.command for s in handle.history] == ["echo step > one"]
    sim.restore(handle)
    assert len(sim.history) == 1 and "two" not in sim.run("ls").output
    child.run("true")
    assert [s.command for s in sim.history] == ["echo step > one", "ls"]
    assert [s.command for s in child.history] == ["echo step > one", "true"]
    sim.release(handle)
    child.close()
    sim.run("rm one")
    check_branching(sim, workdir_file="README")


def test_a_fork_of_a_fork_stacks_its_parents_layers(sandbox):
    sandbox.run("echo 1 > gen; mkdir -p deep/er && echo a > deep/er/f")
    child = sandbox.fork()
    child.run("echo 2 > gen; rm -rf deep; echo b > only-child")
    grandchild = child.fork()
    with grandchild:
        out = grandchild.run("cat gen; ls; test -e deep && echo deep-is-back").output
        assert out.startswith("2\n") and "only-child" in out and "deep-is-back" not in out
        snap = grandchild.snapshot()
        assert not any((snap.frozen.path / "m0").iterdir()), "nothing changed since the fork, yet files were frozen"
        assert len(snap.layers(0)) == 3
    child.close()
    assert sandbox.run("cat gen; cat deep/er/f; ls").output.split() == ["1", "a", *sorted(
        sandbox.run("ls").output.split())]


def test_restore_puts_back_replaced_directories_symlinks_and_modes(sandbox):
    sandbox.run("mkdir -p d/sub && echo x > d/sub/x && ln -s README link && chmod 600 README")
    handle = sandbox.snapshot()
    sandbox.run("rm -rf d && mkdir d && echo y > d/new && rm link && ln -s nowhere link && chmod 755 README "
                "&& rm -rf src && mkdir build && head -c 3000000 /dev/urandom > build/blob")
    sandbox.restore(handle)
    out = sandbox.run("ls d; cat d/sub/x; readlink link; stat -c %a README; ls src | head -1; ls build 2>&1").output
    lines = out.splitlines()
    assert lines[:4] == ["sub", "x", "README", "600"], out
    assert lines[4] and "No such file" in lines[5], out
    assert sandbox.diff() == "" or "README" in sandbox.diff()


def test_processes_end_at_restore_and_are_not_copied_by_a_fork(sandbox):
    handle = sandbox.snapshot()
    sandbox.run("(sleep 300 &) ; sleep 0.1")
    assert "sleep 300" in sandbox.run("ps -eo args").output
    with sandbox.fork() as child:
        assert "sleep 300" not in child.run("ps -eo args").output
    sandbox.restore(handle)
    assert "sleep 300" not in sandbox.run("ps -eo args").output


def test_a_snapshot_holds_the_changed_bytes_and_links_what_did_not_change(sandbox):
    sandbox.run("head -c 1000000 /dev/urandom > big; echo small > small")
    first = sandbox.snapshot()
    assert first.bytes >= 1_000_000
    sandbox.run("echo again > small")
    second = sandbox.snapshot()
    assert second.bytes < 1000, "the unchanged megabyte was copied again"
    assert os.stat(second.frozen.path / "m0" / "big").st_ino == os.stat(first.frozen.path / "m0" / "big").st_ino


def test_snapshots_count_toward_the_disk_limit(small_tree):
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=SandboxConfig(disk=3_000_000)) as sb:
        sb.run("head -c 1000000 /dev/urandom > a")
        sb.snapshot()
        sb.run("head -c 1000000 /dev/urandom > b")
        with pytest.raises(SnapshotError, match="over its disk limit"):
            sb.snapshot()
        assert sb.run("ls a b").exit_code == 0


def test_handles_belong_to_their_episode_and_die_with_release(sandbox):
    handle = sandbox.snapshot()
    with sandbox.fork(handle) as child:
        with pytest.raises(SnapshotError, match="only its own snapshots"):
            child.restore(handle)
        sandbox.release(handle)
        assert handle.frozen.path.exists(), "a live fork's layers were removed"
        with pytest.raises(SnapshotError, match="was released"):
            sandbox.restore(handle)
        assert child.run("cat README").exit_code == 0
    assert not handle.frozen.path.exists()


SNAPSHOTTING = """import sys
from pathlib import Path
from sweworld.sandbox import Layers, Sandbox
sandbox = Sandbox({"/testbed": Layers([Path(sys.argv[1])])})
sandbox.run("echo changed > README")
handle = sandbox.snapshot()
child = sandbox.fork(handle)
child.run("true")
path = handle.frozen.path"""


def test_env_gc_reclaims_the_snapshots_of_a_killed_process(small_tree, tmp_path, monkeypatch):
    from tests.sandbox.test_workdirs_gc import gc, killed_owner
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    frozen = killed_owner(SNAPSHOTTING, str(small_tree[0]))
    assert (frozen / "m0" / "README").is_file()
    assert f"removed episode {frozen}" in gc()
    assert not frozen.exists() and not any(workdirs.root().iterdir())


def test_after_the_first_fork_the_next_ones_are_written_into_started_spares(sandbox):
    sandbox.run("echo a > one; mkdir -p d && echo b > d/two; rm -rf src; export SPARE_VAR=1; cd d")
    handle = sandbox.snapshot()
    first = sandbox.fork(handle)
    second, third = sandbox.fork(handle), sandbox.fork(handle)
    assert [c.info["fork"] for c in (first, second, third)] == ["stacked", "into a spare", "into a spare"]
    for child in (first, second, third):
        assert child.run("pwd; echo $SPARE_VAR; cat ../one two; ls .. | grep -c src").output.split() == [
            "/testbed/d", "1", "a", "b", "0"]
    second.run("echo mine > ../one")
    assert third.run("cat ../one").output == "a\n" and sandbox.run("cat ../one").output == "a\n"
    for child in (first, second, third):
        child.close()
    sandbox.run("head -c 5000000 /dev/urandom > big")
    with sandbox.fork() as big:
        assert big.info["fork"] == "stacked", "5 MB of changes are shared as a layer, not copied"


def test_a_hybrid_episodes_fork_keeps_its_audit_tally_and_draws_apart():
    import random

    from tests.backends.test_backends_seam import TASK

    from sweworld.backends.hybrid import EpisodeHooks
    hooks = EpisodeHooks(None, TASK, random.Random(7))
    hooks.audits["steps"] = {"audited": 3}
    child = hooks.fork()
    assert child.audits == hooks.audits and child.audits is not hooks.audits
    assert [child.rng.random() for _ in range(3)] == [hooks.rng.random() for _ in range(3)]
    child.audits["steps"]["audited"] = 4
    assert hooks.audits["steps"]["audited"] == 3


def test_the_set_up_runs_again_in_a_fork_and_after_a_restore(sandbox):
    sandbox.setup = "(sleep 300 > /dev/null 2>&1 &); export SET_UP=1"
    sandbox.run(sandbox.setup)
    handle = sandbox.snapshot()
    # the set-up's background sleep may not have exec'd yet when the next command runs (a loaded
    # machine): wait for it to show, then count
    count = ("for _ in $(seq 200); do ps -eo args | grep -q '^sleep 300' && break; sleep 0.05; done; "
             "ps -eo args | grep -c '^sleep 300'")
    with sandbox.fork(handle) as child:
        assert child.run(f"{count}; echo $SET_UP").output.split() == ["1", "1"]
    sandbox.restore(handle)
    assert sandbox.run(count).output.split() == ["1"]


def test_a_traced_episode_forks_as_a_traced_episode_of_its_own(sandbox, tmp_path):
    from tests.backends.test_backends_seam import TASK

    from sweworld.world.traces import TraceStore
    from sweworld.world.tracing import TracingExecutor
    store = TraceStore(tmp_path / "traces.jsonl")
    traced = TracingExecutor(sandbox, TASK, store)
    traced.run("echo one > one")
    handle = traced.snapshot()
    traced.run("echo two > two")
    child = traced.fork(handle)
    assert isinstance(child, TracingExecutor) and child.episode != traced.episode
    child.run("ls")
    assert child.steps == 2 and [s.command for s in child.history] == ["echo one > one", "ls"]
    traced.restore(handle)
    assert traced.steps == 1 and "two" not in traced.run("ls").output
    child.close()
    steps = [(s.episode == child.episode, s.step, s.command) for s in store.load()]
    assert (True, 1, "ls") in steps and (False, 1, "echo two > two") in steps


def test_restore_honours_a_lower_layers_attribute_whiteout(tmp_path):
    """An image layer unpacked where mknod is refused deletes with an empty file carrying
    ``user.overlay.whiteout`` (``oci.unpack``): restore must read it as the kernel does, a deletion."""
    base, top = tmp_path / "base", tmp_path / "top"
    for layer in (base, top):
        layer.mkdir()
    (base / "gone").write_text("deleted by the layer above\n")
    (base / "kept").write_text("kept\n")
    (top / "gone").touch()
    os.setxattr(top / "gone", "user.overlay.whiteout", b"")
    os.setxattr(top, "user.overlay.opaque", b"x")
    with Sandbox({"/testbed": Layers([top, base])}) as sandbox:
        assert sandbox.run("ls").output.split() == ["kept"]
        handle = sandbox.snapshot()
        sandbox.run("echo back > gone")
        sandbox.restore(handle)
        assert sandbox.run("ls").output.split() == ["kept"]
