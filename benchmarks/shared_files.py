"""Disk of built environments with and without the content-addressed store (``sweworld.cas``), measured
on a copy of real built environments in one run.

    python benchmarks/shared_files.py [--envs DIR]   # default: this user's $SWEWORLD_HOME/envs

The environments directory is copied (``cp -a``, hard links kept) into a temporary store on the same
file system; the copy's disk is counted (each inode once), every environment and install layer of it
is shared through the store as a freshly built one is (``cas.dedup``), and its disk is counted again:
per environment, per instance layer beyond its environment, and in all. The copy is removed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sweworld import cas
from sweworld.envs.store import disk_usage, envs_root


def disk(paths: list[Path], seen: set[tuple[int, int]] | None = None) -> int:
    """Bytes on disk under ``paths``, each inode counted once (also across calls sharing ``seen``)."""
    seen = set() if seen is None else seen
    return sum(disk_usage(path, seen) for path in paths)


def layers(envs: Path) -> tuple[list[Path], list[Path]]:
    """The environments (their ``venv``) and the instance layers (``testbed`` and ``venv``) under ``envs``."""
    environments = [e for e in sorted(envs.iterdir()) if (e / "venv").is_dir()]
    instances = [i for e in environments for i in sorted((e / "instances").glob("*")) if (i / "meta.json").is_file()]
    return environments, instances


def measure(envs: Path) -> dict:
    work = Path(tempfile.mkdtemp(prefix="sweworld-shared-", dir=envs.parent))
    copy = work / "envs"
    subprocess.run(["cp", "-a", str(envs), str(copy)], check=True)
    environments, instances = layers(copy)
    before_env = disk([e / "venv" for e in environments])
    before_inst = [disk([p for p in (i / "testbed", i / "venv") if p.is_dir()]) for i in instances]
    os.environ["SWEWORLD_HOME"] = str(work)  # the store of the copy, beside it
    started = time.perf_counter()
    for part in [e / "venv" for e in environments] + [p for i in instances for p in (i / "testbed", i / "venv")]:
        if part.is_dir():
            cas.dedup(part)
    seconds = time.perf_counter() - started
    seen: set[tuple[int, int]] = set()
    after_env = disk([e / "venv" for e in environments], seen)
    after_inst = [disk([p for p in (i / "testbed", i / "venv") if p.is_dir()], seen) for i in instances]
    subprocess.run(["rm", "-rf", str(work)], check=True)
    return {"environments": len(environments), "instances": len(instances), "dedup_s": seconds,
            "env_before": before_env, "env_after": after_env, "inst_before": before_inst, "inst_after": after_inst}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=Path, default=None)
    args = parser.parse_args()
    figures = measure(args.envs or envs_root())
    mib = 2**20
    print("| figure | without the store | with it |\n| --- | ---: | ---: |")
    print(f"| {figures['environments']} environments (MiB) | {figures['env_before'] / mib:.1f} | "
          f"{figures['env_after'] / mib:.1f} |")
    for label, fn in (("median", statistics.median), ("max", max)):
        print(f"| disk per instance beyond its environment, {label} of {figures['instances']} (MiB) | "
              f"{fn(figures['inst_before']) / mib:.1f} | {fn(figures['inst_after']) / mib:.1f} |")
    print(f"| all {figures['instances']} instance layers (MiB) | {sum(figures['inst_before']) / mib:.1f} | "
          f"{sum(figures['inst_after']) / mib:.1f} |")
    print(f"| time to share them all (s) | - | {figures['dedup_s']:.1f} |")


if __name__ == "__main__":
    main()
