"""Yield and cost of ``sweworld mine`` on a real history, beside SWE-Gym's published figures.

    python benchmarks/mine_yield.py --repo DIR|URL --since 2023-01-01 --until 2024-01-01 [--name owner/name]
        [--max-candidates N] [--workers 2] [--out runs/mine-yield]

Prints: commits on the first-parent chain, candidates, candidates validated, instances kept, drops
by reason, wall and CPU time (the whole machine's user+system time over the run, sandboxes
included: meaningful on an otherwise idle machine) and of the run itself (this process and every
child it waited for: the sandboxes and their test runs), validated instances per CPU-hour, and disk per
kept instance beyond the shared environments (the instance install layers plus the base trees the
run checked out, divided by the instances kept). SWE-Gym: 2,438 instances for about 10k CPU-hours
of Docker builds (0.24 per CPU-hour) and a 2.6 GB image per instance. The script names no repository.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sweworld.backends.real import RealBackend
from sweworld.envs import EnvBuilder
from sweworld.envs.store import disk_usage, envs_root
from sweworld.mine.pipeline import MineOptions
from sweworld.mine.run import mine_repository
from sweworld.repos import RepoStore

SWEGYM_PER_CPU_HOUR = 2438 / 10_000
SWEGYM_IMAGE_MB = 2600


def instance_disk(repos: RepoStore, label: str) -> int:
    """Bytes of instance layers (every environment's) and of the base trees of ``label``."""
    layers = sum(disk_usage(d) for d in envs_root().glob("*/instances") if d.is_dir())
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
    repos = RepoStore()
    options = MineOptions(rev=args.rev, since=args.since, until=args.until, max_candidates=args.max_candidates,
                          workers=args.workers, timeout=args.timeout)
    out = args.out / "tasks.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    _result, summary = mine_repository(args.repo, out, options, backend=RealBackend(EnvBuilder(repos)), repos=repos,
                                      name=args.name)
    kept = summary["validated"]
    disk = instance_disk(repos, summary["repo"])
    cpu_h, own_h = (summary["cpu_seconds"] or 0) / 3600, summary["process_cpu_seconds"] / 3600
    print(f"{summary['repo']} {args.since or 'start'}..{args.until or 'now'}: {summary['steps']} commits, "
          f"{summary['candidates']} candidates, {summary['validated_candidates']} validated, {kept} kept")
    print("drops:", json.dumps(summary["dropped"]))
    print("versions:", {v: c["recipe"] for v, c in summary["versions"].items()})
    own = summary["validated_per_process_cpu_hour"] or 0
    print(f"wall {summary['seconds'] / 3600:.2f} h; CPU of the run {own_h:.2f} h (machine {cpu_h:.2f} h): {own} kept "
          f"per CPU-hour of the run ({own / SWEGYM_PER_CPU_HOUR:.0f}x SWE-Gym's {SWEGYM_PER_CPU_HOUR:.2f}); "
          f"{summary['validated_per_cpu_hour']} per CPU-hour of the machine")
    if kept:
        print(f"disk beyond the shared environments: {disk / kept / 1e6:.1f} MB per kept instance "
              f"(SWE-Gym: {SWEGYM_IMAGE_MB} MB image per instance)")
    (args.out / "yield.json").write_text(json.dumps({**summary, "disk_bytes": disk}, indent=1) + "\n")


if __name__ == "__main__":
    main()
