"""Benchmarks of the docker-free substrate (issue [substrate]): P1, P2, P4, measured in one run.

    python benchmarks/substrate.py [--large django==4.2.16] [--repeat 20]

P1  workspace reset: a fresh copy-on-write workspace of a large real tree (a PyPI sdist) vs `cp -a`
    of the same tree; also the whole isolated sandbox (namespaces + agent + shell) until a first
    command has answered.
P2  per-command overhead of `true` in a persistent session vs bare `bash -c true` vs a fresh
    bwrap per command.
P4  extra disk per additional episode of an already-built environment.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.envs.store import disk_usage
from sweworld.repos import RepoStore, pypi_repo
from sweworld.sandbox import Layers, Sandbox, SandboxConfig
from sweworld.sandbox.isolation import Layout, Overlay, bwrap_args, overlay_mount_lines
from sweworld.tasks import load_tasks


def median_ms(fn, repeat: int) -> float:
    """Median wall time of ``fn`` in ms; a function returning a float reports its own time."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        own = fn()
        samples.append(own if isinstance(own, float) else (time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def p1(tree: Path, repeat: int) -> None:
    files = sum(1 for _ in tree.rglob("*"))
    scratch = Path(tempfile.mkdtemp(prefix="sweworld-p1-"))

    def copy() -> None:
        dest = scratch / "copy"
        subprocess.run(["cp", "-a", str(tree), str(dest)], check=True)
        shutil.rmtree(dest)

    def overlay() -> None:
        root = Path(tempfile.mkdtemp(dir=scratch))
        for name in ("upper", "work", "merged"):
            (root / name).mkdir()
        ov = Overlay("/testbed", [tree], root / "upper", root / "work", root / "merged")
        script = "set -e\n" + "\n".join(overlay_mount_lines([ov])) + f"\ntest -f {root}/merged/setup.py -o -d {root}/merged"
        subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", script], check=True)

    closing: list[float] = []

    def sandbox(config: SandboxConfig):
        def run() -> float:  # ready latency: until a first command has answered (close timed apart)
            started = time.perf_counter()
            sb = Sandbox({"/testbed": Layers([tree])}, config=config)
            sb.run("true")
            ready = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            sb.close()
            closing.append((time.perf_counter() - started) * 1000)
            return ready
        return run

    os.sync()  # pending writeback (e.g. of an earlier copy) would slow every file operation below
    overlay_ms = median_ms(overlay, repeat)
    full_ms = median_ms(sandbox(SandboxConfig()), repeat)
    nocg_ms = median_ms(sandbox(SandboxConfig(processes=None)), repeat)
    copy_ms = median_ms(copy, max(3, repeat // 4))  # last: its writeback slows what follows
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"P1 workspace reset on {tree.name[:12]} ({files} files)")
    print(f"   cp -a                                   {copy_ms:9.1f} ms")
    print(f"   overlay workspace in a fresh namespace  {overlay_ms:9.1f} ms   {copy_ms / overlay_ms:6.1f}x faster")
    print(f"   whole isolated sandbox, first command   {full_ms:9.1f} ms   {copy_ms / full_ms:6.1f}x faster")
    print(f"     (same, no pids cgroup)                {nocg_ms:9.1f} ms   {copy_ms / nocg_ms:6.1f}x faster")
    print(f"   closing a sandbox (not in the above)    {statistics.median(closing):9.1f} ms")


def p2(tree: Path, repeat: int) -> None:
    n = repeat * 25
    bare_ms = median_ms(lambda: subprocess.run(["bash", "-c", "true"], check=True), n)
    with Sandbox({"/testbed": Layers([tree])}) as sb:
        persistent_ms = median_ms(lambda: sb.run("true"), n)
    with Sandbox({"/testbed": Layers([tree])}, config=SandboxConfig(persistent=False)) as sb:
        stateless_ms = median_ms(lambda: sb.run("true"), n)
    scratch = Path(tempfile.mkdtemp(prefix="sweworld-p2-"))
    args = bwrap_args(Layout(tmp=scratch, workdir="/tmp"), SandboxConfig())
    fresh_ms = median_ms(lambda: subprocess.run([*args, "--", "/bin/bash", "-c", "true"], check=True), repeat * 5)
    shutil.rmtree(scratch, ignore_errors=True)
    print("P2 per-command overhead of `true`")
    print(f"   bare subprocess bash -c true            {bare_ms:9.2f} ms")
    print(f"   persistent session                      {persistent_ms:9.2f} ms   {persistent_ms / bare_ms:5.2f}x bare")
    print(f"   stateless session (bash -c per command) {stateless_ms:9.2f} ms   {stateless_ms / bare_ms:5.2f}x bare")
    print(f"   fresh bwrap per command                 {fresh_ms:9.2f} ms   {fresh_ms / bare_ms:5.2f}x bare")


def p4() -> None:
    task = load_tasks(path_of("demo"))[0]
    builder = EnvBuilder()
    layer = builder.instance(task)
    shared = disk_usage(layer.env.path) + disk_usage(layer.tree)
    with episode_sandbox(layer, SandboxConfig(keep=True)) as sb:
        sb.run("python -c 'import sys' && git status --porcelain >/dev/null && python -m pytest --co -q >/dev/null")
        episode = sb.episode_dir
        extra = disk_usage(episode)
    shutil.rmtree(episode, ignore_errors=True)
    print(f"P4 disk per additional episode of {task.instance_id}")
    print(f"   shared (env + install layer + base tree) {shared / 1e6:9.1f} MB")
    print(f"   extra per episode (after a test collection) {extra / 1e6:6.3f} MB   "
          f"{shared / max(extra, 1):7.0f}x smaller than a copy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", default="django==4.2.16", help="PyPI release used as the large tree")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    name, version = args.large.split("==")
    _mirror, commit = pypi_repo(name, version)
    tree = RepoStore().tree(f"pypi/{name}", commit, f"pypi:{name}=={version}")
    p1(tree, args.repeat)
    p2(tree, args.repeat)
    p4()


if __name__ == "__main__":
    main()
