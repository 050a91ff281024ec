"""Total disk and inode bounds of an episode (``SandboxConfig.disk``/``inodes``, sandbox/diskbound.py).

Each writer below sleeps after passing its bound: the watcher ends the episode during the sleep,
so the command raises at once; were the bound not enforced, the command would end normally (and
the test fail) after the sleep."""

from __future__ import annotations

import pytest

from sweworld.core.errors import InfraError
from sweworld.sandbox import Layers, Sandbox, SandboxConfig
from sweworld.sandbox.diskbound import DiskBoundError

pytestmark = pytest.mark.bwrap

MiB = 2**20
SMALL = SandboxConfig(disk=20 * MiB, inodes=2000)


def _episode(small_tree) -> Sandbox:
    tree, commit = small_tree
    return Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=SMALL)


@pytest.mark.parametrize("where", ["/testbed", "/tmp"])
def test_writing_past_the_byte_bound_ends_the_episode(small_tree, where):
    with _episode(small_tree) as sb:
        with pytest.raises(DiskBoundError) as caught:
            sb.run(f"dd if=/dev/zero of={where}/big bs=1M count=64 status=none; sleep 60", timeout=120)
        error = caught.value
        assert isinstance(error, InfraError)
        assert error.bound == "disk" and error.held > 20 * MiB and error.limit == 20 * MiB
        assert "disk bound of 20.0 MiB" in error.message and "SandboxConfig.disk" in (error.hint or "")
        with pytest.raises(DiskBoundError):  # the episode stays ended, and says why
            sb.run("echo still here")


def test_creating_more_files_than_the_inode_bound_ends_the_episode(small_tree):
    with _episode(small_tree) as sb:
        with pytest.raises(DiskBoundError) as caught:
            sb.run("mkdir /tmp/many && cd /tmp/many && seq 5000 | xargs touch; sleep 60", timeout=120)
        error = caught.value
        assert error.bound == "inodes" and error.held > 2000 and error.limit == 2000
        assert "inode bound of 2000" in error.message and "SandboxConfig.inodes" in (error.hint or "")


def test_a_command_under_the_bounds_is_unaffected_and_measured(small_tree):
    with _episode(small_tree) as sb:
        done = sb.run("head -c 1048576 /dev/urandom > /testbed/one.bin && mkdir /tmp/few && cd /tmp/few "
                      "&& seq 100 | xargs touch && ls | wc -l")
        assert done.ok and done.output.strip() == "100"
        usage = sb.disk_usage()
        assert 1 * MiB <= usage.bytes < 20 * MiB and 100 < usage.inodes < 2000
        assert sb.run("cat /testbed/pkg/__init__.py").output.startswith("def add")
        assert sb.info["disk_bound"].startswith("0.0 GiB, 2000 inodes")


def test_a_wide_tree_is_measured_with_one_descriptor_per_level(tmp_path):
    """3,000 sibling directories: a measurement holds one descriptor per level it descends, never
    one per directory (thousands held at once broke every ``select`` of the process)."""
    import os
    import threading

    from sweworld.sandbox import diskbound
    for i in range(3000):
        (tmp_path / f"d{i}" / "e").mkdir(parents=True)
    seen, done = [0], threading.Event()

    def count() -> None:
        while not done.is_set():
            seen[0] = max(seen[0], len(os.listdir("/proc/self/fd")))
    watcher = threading.Thread(target=count)
    base = len(os.listdir("/proc/self/fd"))
    watcher.start()
    try:
        usage = diskbound.measure([tmp_path])
    finally:
        done.set()
        watcher.join()
    assert usage.inodes == 6001 and not usage.too_deep  # the directories and the top one
    assert seen[0] - base < 16, seen


def test_directories_nested_past_what_is_measured_end_the_episode(small_tree):
    from sweworld.sandbox.diskbound import MAX_DEPTH
    with _episode(small_tree) as sb, pytest.raises(DiskBoundError) as caught:
        sb.run(f"for i in $(seq {MAX_DEPTH + 8}); do mkdir d && cd d || break; done; sleep 60", timeout=120)
    assert caught.value.bound == "depth" and f"deeper than {MAX_DEPTH} levels" in caught.value.message


def test_an_episode_opens_and_answers_in_a_process_holding_descriptors_past_1023(small_tree):
    import os
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1400:
        pytest.skip("the hard limit on open files is under 1,400")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1400), hard))
    held = [os.open("/dev/null", os.O_RDONLY) for _ in range(1100)]
    try:
        with _episode(small_tree) as sb:
            assert sb.run("echo past").output == "past\n"
    finally:
        for fd in held:
            os.close(fd)
