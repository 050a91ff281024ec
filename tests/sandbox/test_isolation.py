"""Isolation: every test here would fail if the sandbox did not isolate."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

from sweworld.sandbox import Layers, Sandbox, SandboxConfig

pytestmark = pytest.mark.bwrap


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_network_is_unreachable_even_loopback_of_the_host(small_tree):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted = []
    server.settimeout(10)

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass
    threading.Thread(target=accept, daemon=True).start()
    probe = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
             f"    print('CONNECTED')\nexcept OSError as e:\n    print('REFUSED', e)\n"
             "try:\n    socket.create_connection(('1.1.1.1', 80), timeout=3)\n    print('OUT')\n"
             "except OSError as e:\n    print('NO-ROUTE', e)\n")
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        sb.write_file("/tmp/probe.py", probe)
        out = sb.run("python3 /tmp/probe.py").output
    server.close()
    assert "REFUSED" in out and "CONNECTED" not in out
    assert "NO-ROUTE" in out and "OUT\n" not in out
    assert not accepted


def test_writes_outside_testbed_and_tmp_fail_and_host_is_untouched(small_tree, tmp_path):
    tree, commit = small_tree
    before = tree_digest(tree)
    marker = f"sweworld-{uuid.uuid4().hex}"
    targets = ["/usr", "/etc", "/", "/root", "/var", str(tree), str(tmp_path)]
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        for target in targets:
            result = sb.run(f"echo x > {target}/{marker}")
            assert result.exit_code != 0, target
        assert sb.run(f"echo x > /testbed/{marker} && echo y > /tmp/{marker}").exit_code == 0
        assert sb.run("echo changed >> /testbed/README").exit_code == 0
    for target in targets:
        assert not Path(target, marker).exists()
    assert tree_digest(tree) == before
    assert not (tree / marker).exists()


def test_host_files_outside_the_mounts_are_invisible(small_tree, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        result = sb.run(f"cat {secret}")
        assert result.exit_code != 0
        assert "top secret" not in result.output
        with pytest.raises(FileNotFoundError):
            sb.read_file(str(secret))


def test_host_environment_variables_are_not_visible(small_tree, monkeypatch):
    monkeypatch.setenv("SWEWORLD_TEST_SECRET", "hunter2")
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as sb:
        out = sb.run("env").output
    assert "hunter2" not in out and "SWEWORLD_TEST_SECRET" not in out
    assert "HOME=/tmp/home" in out


def test_timeout_kills_the_whole_process_tree(sandbox):
    token = uuid.uuid4().hex
    result = sandbox.run(f"(setsid sleep 1000 {token} &); sleep 1000 {token} & sleep 600", timeout=1)
    assert result.timed_out and result.exit_code == 124 and result.restarted
    assert "timed out" in result.output
    host = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert token not in host
    assert token not in sandbox.run("ps -eo args").output
    assert sandbox.run("echo alive").output.strip() == "alive"


def test_bounded_process_flood_is_stopped_by_the_process_limit(small_tree):
    tree, commit = small_tree
    flood = ("import os, time\nok = 0\nerr = ''\nfor i in range(3000):\n    try:\n        pid = os.fork()\n"
             "    except OSError as e:\n        err = repr(e)\n        break\n    if pid == 0:\n"
             "        time.sleep(60)\n        os._exit(0)\n    ok += 1\nprint('FORKED', ok, err)\n")
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit,
                 config=SandboxConfig(processes=200)) as sb:
        assert sb.info["process_limit"] in ("rlimit", "cgroup")  # this kernel counts per user namespace
        sb.write_file("/tmp/flood.py", flood)
        out = sb.run("python3 /tmp/flood.py", timeout=120).output
        forked = int(out.split("FORKED")[1].split()[0])
        assert forked < 200, out
        assert "Resource temporarily unavailable" in out or "BlockingIOError" in out or "11" in out
        assert sb.run("echo still-here").output.strip() == "still-here"


def test_output_flood_is_capped_head_and_tail(small_tree):
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit,
                 config=SandboxConfig(output_cap=100_000)) as sb:
        result = sb.run("echo FIRST; yes 0123456789 | head -c 50000000; echo; echo LAST")
    assert result.exit_code == 0 and result.truncated
    assert len(result.output) < 120_000
    assert result.output.startswith("FIRST") and result.output.rstrip().endswith("LAST")
    assert "bytes of output cut" in result.output


def test_invalid_utf8_is_replaced(sandbox):
    out = sandbox.run(r"printf 'ok \xff\xfe end'").output
    assert out == "ok \ufffd\ufffd end"


def test_file_size_and_memory_limits(small_tree):
    tree, commit = small_tree
    config = SandboxConfig(file_size=1_000_000, memory=1024**3)
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=config) as sb:
        big = sb.run("head -c 5000000 /dev/zero > /tmp/big; echo rc=$?; stat -c %s /tmp/big")
        assert "rc=0" not in big.output
        assert int(big.output.split()[-1]) <= 1_000_000
        mem = sb.run("python3 -c 'x = bytearray(3 * 1024**3)' 2>&1; echo rc=$?")
        assert "MemoryError" in mem.output and "rc=0" not in mem.output


def test_two_episodes_do_not_see_each_other_and_base_is_unchanged(small_tree):
    tree, commit = small_tree
    before = tree_digest(tree)
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as a, \
            Sandbox({"/testbed": Layers([tree])}, base_commit=commit) as b:
        a.run("echo from-a > /testbed/a.txt && echo broken > pkg/__init__.py && rm README")
        assert b.run("cat /testbed/a.txt").exit_code != 0
        assert "return a + b" in b.read_file("pkg/__init__.py")
        assert b.run("test -f README").exit_code == 0
        assert "a.txt" in a.diff() and "README" in a.diff()
        assert b.diff() == ""
    assert tree_digest(tree) == before


def test_episode_directory_is_removed_on_close(small_tree):
    tree, commit = small_tree
    sb = Sandbox({"/testbed": Layers([tree])}, base_commit=commit)
    sb.run("echo x > /testbed/new")
    episode = sb.episode_dir
    assert episode.exists()
    sb.close()
    assert not episode.exists()
    assert not any(str(episode) in line for line in Path("/proc/self/mountinfo").read_text().splitlines())


def test_copy_workspace_fallback_behaves_the_same(small_tree):
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit,
                 config=SandboxConfig(workspace="copy")) as sb:
        assert sb.info["workspace"] == "copy"
        sb.run("echo new > /testbed/new.txt")
        assert "new.txt" in sb.diff()
    assert not (tree / "new.txt").exists()


def test_isolation_none_is_explicit_and_warns(small_tree, caplog):
    tree, commit = small_tree
    with Sandbox({"/testbed": Layers([tree])}, base_commit=commit,
                 config=SandboxConfig(isolation="none")) as sb:
        assert sb.run("echo ok").output.strip() == "ok"
        assert sb.info["isolation"] == "none"
    assert any("isolation is OFF" in rec.message for rec in caplog.records)


def test_runs_as_a_non_root_user_too():
    """The mechanism needs no root at run time: an ordinary user mounts the overlay and runs bwrap."""
    if os.geteuid() != 0:
        pytest.skip("already running as an ordinary user")
    import pwd
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user")
    work = Path(tempfile.mkdtemp(prefix="sweworld-nobody-", dir="/tmp"))
    work.chmod(0o755)
    subprocess.run(["chown", "-R", f"{nobody.pw_uid}:{nobody.pw_gid}", str(work)], check=True)
    script = (f"mkdir -p {work}/lower {work}/upper {work}/work {work}/merged && echo hi > {work}/lower/f && "
              "unshare --user --map-root-user --mount -- sh -c 'mount -t overlay overlay -o "
              f"userxattr,lowerdir={work}/lower,upperdir={work}/upper,workdir={work}/work {work}/merged && "
              "exec bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib "
              "--symlink usr/lib64 /lib64 --proc /proc --dev /dev --unshare-pid --unshare-net "
              f"--bind {work}/merged /testbed -- /bin/sh -c \"cat /testbed/f; echo y > /testbed/g\"'"
              )
    proc = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                           "sh", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hi"
    assert (work / "upper" / "g").exists() and not (work / "lower" / "g").exists()
    shutil.rmtree(work, ignore_errors=True)
