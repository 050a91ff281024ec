"""P6: validated instances per CPU-hour, test selection vs validating every candidate on the full suite.

    python benchmarks/synth.py [--candidates 40] [--workers 2] [--repos pypi:toolz==1.0.0 ...]

Same releases, same seed, same candidates, same run: each release is synthesized twice from a
fresh work directory (no cached outcome), once with coverage-based test selection (uncovered
candidates are never run, the rest are screened on their covering tests, survivors validated on
the whole suite) and once naively (every candidate on the whole suite, then its failing tests
again). The release's preparation (baseline runs; the coverage run for selection) is counted.
Environments are built before timing starts.

Two CPU measures: core-hours = wall x workers (the cores held), and CPU-hours = user + system
time of the whole machine over the run (/proc/stat; run it on an otherwise idle machine). The
release's preparation (~5-15 s: two baseline runs, the coverage run) is paid once per release
and amortized over a real run's hundreds of candidates; "steady" excludes it.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from sweworld.envs import EnvBuilder
from sweworld.synth import KINDS
from sweworld.synth.pipeline import SynthOptions, synthesize
from sweworld.synth.release import ReleaseSpec, release_task

REPOS = ["pypi:toolz==1.0.0", "pypi:tabulate==0.9.0", "pypi:cachetools==5.5.0", "pypi:boltons==24.0.0"]


def run(repo: str, naive: bool, candidates: int, workers: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        result = synthesize(ReleaseSpec(repo=repo), SynthOptions(
            max_candidates=candidates, methods=tuple(KINDS), seed=seed, workers=workers, naive=naive),
            work=Path(tmp))
    stats = result.stats.to_dict()
    stats["instances"] = sorted(t.instance_id for t in result.instances)
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=40, help="candidates per release")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repos", nargs="*", default=REPOS)
    args = parser.parse_args()
    builder = EnvBuilder()
    for repo in args.repos:  # build (or find) every environment before timing
        builder.instance(release_task(ReleaseSpec(repo=repo), builder)[0])
    totals = {False: [0, 0.0, 0.0, 0.0], True: [0, 0.0, 0.0, 0.0]}
    header = (f"{'release':24} {'mode':9} {'cand':>4} {'valid':>5} {'suites':>6} {'screens':>7} {'timeouts':>8} "
              f"{'prep s':>6} {'wall s':>7} {'/core-h':>8} {'/cpu-h':>8} {'steady /core-h':>14}")
    print(f"P6: {args.candidates} candidates per release, {args.workers} workers, seed {args.seed}")
    print(header)
    for repo in args.repos:
        for naive in (False, True):
            s = run(repo, naive, args.candidates, args.workers, args.seed)
            steady = (s["seconds"] - s["prepare_seconds"]) * args.workers
            totals[naive][0] += s["validated"]
            totals[naive][1] += s["seconds"] * args.workers
            totals[naive][2] += s["cpu_seconds"] or 0.0
            totals[naive][3] += steady
            timeouts = sum(c.get("timeout", 0) for c in s["methods"].values())
            print(f"{repo[5:]:24} {'naive' if naive else 'selection':9} {s['candidates']:>4} {s['validated']:>5} "
                  f"{s['suite_runs']:>6} {s['screen_runs']:>7} {timeouts:>8} {s['prepare_seconds']:>6.1f} "
                  f"{s['seconds']:>7.1f} {s['validated_per_core_hour']:>8} {s['validated_per_cpu_hour']:>8} "
                  f"{s['validated'] * 3600 / steady:>14.0f}", flush=True)
    rates = {}
    for naive, (valid, core_s, cpu_s, steady_s) in totals.items():
        rates[naive] = (valid * 3600 / core_s, valid * 3600 / cpu_s if cpu_s else 0.0, valid * 3600 / steady_s)
        print(f"{'naive' if naive else 'selection':9} overall: {valid} validated, {rates[naive][0]:.0f} per core-hour, "
              f"{rates[naive][1]:.0f} per CPU-hour, {rates[naive][2]:.0f} per core-hour steady")
    if all(rates[True]):
        print("ratio selection / naive: " + ", ".join(
            f"{rates[False][i] / rates[True][i]:.2f}x {label}" for i, label in
            enumerate(("per core-hour", "per CPU-hour", "per core-hour steady"))))


if __name__ == "__main__":
    main()
