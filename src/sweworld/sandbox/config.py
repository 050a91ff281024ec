"""Configuration of the real sandbox: isolation, limits, sessions."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

GiB = 1024**3


class SandboxConfig(BaseModel):
    """How a sandbox isolates and limits what runs in it."""

    isolation: Literal["bwrap", "none"] = Field(
        default="bwrap",
        description="'bwrap': own user, mount, pid, net, ipc and uts namespaces, host read-only. "
        "'none' (explicit opt-in, prints a warning): the same file layout without namespaces for "
        "pid/net/ipc and with the host writable.")
    network: bool = Field(default=False, description="Keep the host network (environment builds only).")
    persistent: bool = Field(
        default=True, description="One bash per episode (cwd and exports persist) rather than bash -c per command.")
    timeout: float = Field(default=300.0, description="Default wall timeout per command, seconds.")
    output_cap: int = Field(
        default=1_000_000, description="Bytes of output kept per command; past it, half head and half tail.")
    memory: int | None = Field(default=8 * GiB, description="Address-space limit per process (RLIMIT_AS), bytes.")
    processes: int | None = Field(
        default=1024, description="Process limit of the sandbox (RLIMIT_NPROC; a pids cgroup when run as root).")
    file_size: int | None = Field(default=4 * GiB, description="Largest file a process may write (RLIMIT_FSIZE).")
    open_files: int | None = Field(default=4096, description="Open file descriptors per process (RLIMIT_NOFILE).")
    workspace: Literal["auto", "overlay", "copy"] = Field(
        default="auto", description="Copy-on-write overlay, or a full copy where overlay is impossible.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables for commands.")
    passthrough_env: list[str] = Field(
        default_factory=list, description="Host variable names passed into the sandbox (e.g. proxies for builds).")
    hosts: dict[str, str] = Field(
        default_factory=dict, description="Extra /etc/hosts entries, name -> address (local stand-ins of "
        "public services, e.g. httpbin.org -> 127.0.0.1); the host's own entries are kept.")
    ro_paths: list[str] = Field(
        default_factory=list, description="Extra host paths mounted read-only at the same path inside.")
    scratch_dirs: list[str] = Field(default_factory=lambda: ["/var/tmp"], description=(
        "Empty writable directories at these absolute paths inside the episode (its own, removed on close): "
        "/var/tmp, where inspect-ai injects its tools; /logs, /tests for Harbor's verifier."))
    conda_shim: bool = Field(default=True, description=(
        "Mount the conda shim at /opt/miniconda3 (sandbox/conda_shim.py): `source /opt/miniconda3/bin/activate "
        "&& conda activate testbed`, as SWE-bench images' scripts begin, works on the episode's virtualenv."))
    disk: int | None = Field(default=16 * GiB, description=(
        "Most bytes (blocks allocated) the episode may hold in everything it can write: its upper layers, "
        "/tmp, scratch directories. Measured while it lives (sandbox/diskbound.py: past it the episode is "
        "ended and its command raises DiskBoundError, an infrastructure error; a fast writer gets past it by "
        "up to one measurement interval's writing, docs/rootless.md); at each snapshot, what it holds with its "
        "snapshots is checked against it too (past it the snapshot is refused and freed). None: no bound."))
    inodes: int | None = Field(default=1_000_000, description=(
        "Most inodes (files, directories, links) the episode may hold in everything it can write (its upper "
        "layers, /tmp, scratch directories), measured while it lives as `disk` is; None: no bound."))
    fork_spares: int = Field(default=1, ge=0, description=(
        "Sandboxes started ahead, after an episode's first fork, for its next forks: a fork then writes "
        "the snapshot's changes into one instead of waiting for a sandbox to start (sandbox/branches.py)."))
    allow_syscalls: list[str] = Field(default_factory=list, description=(
        "System calls the episode's seccomp filter denies by default (sandbox/seccomp.py: Docker's default "
        "denials, nested user namespaces included) that this episode may make all the same, by name (e.g. "
        "['keyctl'] for a test suite of the kernel keyring); each one allowed is logged when the episode "
        "opens. ['*']: no filter at all (logged too)."))
    keep: bool = Field(default=False, description="Keep the episode directory (upper layers, logs) after close.")
