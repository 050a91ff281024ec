"""The episode's seccomp filter and session keyring (sandbox/seccomp.py, sandbox/kernel.py): what a
dataset allows is named and logged, an allowed keyring is still a fresh one, a wrong name is one
error; the tables agree with the kernel's headers where they are installed. (That the filter holds
in every episode is ``check_isolation``'s keyring and system-call probes, run through every seam.)"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from sweworld.core.errors import ConfigError
from sweworld.sandbox import Layers, Sandbox, SandboxConfig, seccomp
from sweworld.testing.isolation import check_isolation

HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
           "aarch64": Path("/usr/include/asm-generic/unistd.h")}


def _run(sb):
    return lambda command: (lambda r: (r.exit_code, r.output))(sb.run(command, timeout=60))


@pytest.mark.bwrap
def test_allowed_calls_are_logged_and_the_keyring_is_still_the_episodes_own(small_tree, caplog):
    tree, commit = small_tree
    config = SandboxConfig(allow_syscalls=["keyctl", "add_key"])
    with caplog.at_level(logging.INFO, logger="sweworld.sandbox.seccomp"), \
            Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=config) as sb:
        assert sb.info["seccomp"] == "docker-default -add_key -keyctl"
        broken = check_isolation(_run(sb), skip=("network", "host_files", "host_processes", "read_only_host",
                                                 "limits", "host_secret", "cache_paths", "confinement"))
        assert sb.run("echo still").output == "still\n"
    assert "allowed add_key, keyctl" in caplog.text
    # the keyring's calls now reach the kernel, but the episode's session keyring is a fresh one
    assert broken == ["system calls: the episode reached keyctl (the seccomp filter refuses them)"], broken


@pytest.mark.bwrap
def test_a_name_the_filter_does_not_know_is_one_error(small_tree):
    tree, commit = small_tree
    with pytest.raises(ConfigError) as raised:
        Sandbox({"/testbed": Layers([tree])}, base_commit=commit, config=SandboxConfig(allow_syscalls=["keyctrl"]))
    assert "keyctrl" in raised.value.message and "keyctl" in (raised.value.hint or "")


@pytest.mark.parametrize("arch", sorted(seccomp.ARCHES))
def test_the_tables_agree_with_the_kernels_headers(arch):
    header = HEADERS[arch]
    if not header.is_file():
        pytest.skip(f"{header} is not installed")
    defined = dict(re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", header.read_text()))
    table = seccomp.ARCHES[arch].numbers
    assert set(seccomp.known()) - set(table) <= {"create_module", "get_kernel_syms", "ioperm", "iopl",
                                                 "query_module", "sysfs", "_sysctl", "uselib", "ustat"}
    assert {name: nr for name, nr in table.items() if str(nr) != defined.get(name)} == {}


def test_every_allowed_name_shortens_the_program_and_the_program_is_whole_instructions():
    arch = seccomp.ARCHES["x86_64"]
    full = seccomp.program(arch)
    assert len(full) % 8 == 0 and full.endswith(seccomp._ret(seccomp.ALLOW))
    for name in seccomp.known():
        assert len(seccomp.program(arch, {name})) < len(full), name


def test_a_row_asks_for_its_own_calls_by_name_and_a_bad_field_is_one_error(caplog):
    from sweworld.core.errors import DatasetError
    from sweworld.core.types import Task
    from sweworld.envs.episode import with_row_syscalls
    row = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "problem_statement": "p"}
    with caplog.at_level(logging.WARNING, logger="sweworld.envs.episode"):
        config = with_row_syscalls(SandboxConfig(allow_syscalls=["bpf"]), Task(**row, allow_syscalls='["keyctl"]'))
    assert config.allow_syscalls == ["bpf", "keyctl"] and "o__r-1: its row allows keyctl" in caplog.text
    assert with_row_syscalls(SandboxConfig(), Task(**row)).allow_syscalls == []
    with pytest.raises(DatasetError) as raised:
        with_row_syscalls(SandboxConfig(), Task(**row, allow_syscalls={"keyctl": True}))
    assert "o__r-1" in raised.value.message and "allow_syscalls" in raised.value.message


@pytest.mark.bwrap
def test_fallocate_is_unsupported_and_the_c_librarys_posix_fallocate_writes_instead(sandbox):
    """``fallocate`` reserves gigabytes in milliseconds, past the disk bound's watcher: it answers
    EOPNOTSUPP, as a file system without it does, and glibc's ``posix_fallocate`` writes the blocks."""
    reserved = sandbox.run("fallocate -l 64M /tmp/reserved; echo rc=$?")
    assert "Operation not supported" in reserved.output and "rc=1" in reserved.output
    written = sandbox.run("python3 -c \"import os; fd = os.open('/tmp/w', os.O_CREAT | os.O_WRONLY); "
                          "os.posix_fallocate(fd, 0, 1 << 20); print(os.fstat(fd).st_blocks * 512)\"")
    assert written.ok and int(written.output) >= 1 << 20
