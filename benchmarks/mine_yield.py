"""Yield and cost of ``sweworld mine`` on a real history, beside SWE-Gym's published figures.

    python benchmarks/mine_yield.py --repo DIR|URL --since 2023-01-01 --until 2024-01-01 [--name owner/name]
        [--max-candidates N] [--workers 2] [--out runs/mine-yield]

Prints: commits on the first-parent chain, candidates, candidates validated, instances kept, drops
by reason, wall and CPU time (the whole machine's user+system time over the run, sandboxes
included: meaningful on an otherwise idle machine) and, when run as root where a cpuacct (v1) or
cpu (v2) cgroup can be made, of the run alone (the script moves itself into a cgroup of its own, which
every sandbox and test run it starts inherits), validated instances per CPU-hour, and disk per
kept instance beyond the shared environments (the instance install layers plus the base trees the
run checked out, divided by the instances kept). SWE-Gym: 2,438 instances for about 10k CPU-hours
of Docker builds (0.24 per CPU-hour) and a 2.6 GB image per instance. The script names no repository.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.envs import EnvBuilder
from sweworld.envs.store import disk_usage, envs_root, read_meta
from sweworld.mine.pipeline import MineOptions
from sweworld.mine.run import mine_repository
from sweworld.repos import RepoStore

SWEGYM_PER_CPU_HOUR = 2438 / 10_000
SWEGYM_IMAGE_MB = 2600


def own_cgroup() -> Path | None:
    """A CPU-accounting cgroup holding this process (and so everything it starts), or None."""
    if os.geteuid() != 0:
        return None
    v1, v2 = Path("/sys/fs/cgroup/cpuacct"), Path("/sys/fs/cgroup")
    controllers = (v2 / "cgroup.controllers").read_text().split() if (v2 / "cgroup.controllers").is_file() else []
    if (v1 / "cpuacct.usage").is_file():
        group = v1 / f"sweworld-bench-{os.getpid()}"
    elif "cpu" in controllers:
        group = v2 / f"sweworld-bench-{os.getpid()}"
    else:
        return None
    try:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def cgroup_cpu_seconds(group: Path) -> float:
    if (group / "cpuacct.usage").is_file():
        return int((group / "cpuacct.usage").read_text()) / 1e9
    stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
    return int(stat["usage_usec"]) / 1e6


def instance_disk(repos: RepoStore, label: str) -> int:
    """Bytes of the instance layers of ``label``'s environments and of its base trees (other
    repositories' layers, written by runs beside this one, are not counted)."""
    layers = sum(disk_usage(d.parent / "instances") for d in envs_root().glob("*/env.json")
                 if (d.parent / "instances").is_dir() and read_meta(d).get("repo") == label)
    trees = repos.root / "trees" / label.replace("/", "__")
    return layers + (disk_usage(trees) if trees.is_dir() else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--name")
    parser.add_argument("--since")
    parser.add_argument("--until")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--max-candidates", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", type=Path, default=Path("runs/mine-yield"))
    args = parser.parse_args()
    group = own_cgroup()
    repos = RepoStore()
    options = MineOptions(rev=args.rev, since=args.since, until=args.until, max_candidates=args.max_candidates,
                          workers=args.workers, timeout=args.timeout)
    out = args.out / "tasks.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    _result, summary = mine_repository(args.repo, out, options, backend=RealBackend(EnvBuilder(repos)), repos=repos,
                                      name=args.name)
    kept = summary["validated"]
    disk = instance_disk(repos, summary["repo"])
    cpu_h = (summary["cpu_seconds"] or 0) / 3600
    own_h = cgroup_cpu_seconds(group) / 3600 if group is not None else None
    summary["run_cpu_seconds"] = round(own_h * 3600, 1) if own_h is not None else None
    line = f"wall {summary['seconds'] / 3600:.2f} h; CPU of the machine {cpu_h:.2f} h"
    if own_h:
        line += f", of the run (its cgroup) {own_h:.2f} h: {kept / own_h:.1f} kept per CPU-hour"
        line += f" ({kept / own_h / SWEGYM_PER_CPU_HOUR:.0f}x SWE-Gym's {SWEGYM_PER_CPU_HOUR:.2f})"
    print(line + f"; {summary['validated_per_cpu_hour']} per CPU-hour of the machine")
    if kept:
        print(f"disk beyond the shared environments: {disk / kept / 1e6:.1f} MB per kept instance "
              f"(SWE-Gym: {SWEGYM_IMAGE_MB} MB image per instance)")
    (args.out / "yield.json").write_text(json.dumps({**summary, "disk_bytes": disk}, indent=1) + "\n")


if __name__ == "__main__":
    main()
