"""The substrate's figures as root and as an ordinary user, side by side, measured in one run.

    python benchmarks/rootless.py [--user NAME] [--repeat 20] [--live 256 512] [--workers 16]

Run as root with ``--user``: the figures are measured here, then again by this script as that user
(``runuser``; its own ``$SWEWORLD_HOME``, so its own environment build), and printed side by side.
Run as anyone without ``--user``: that identity's figures only. ``--json FILE`` writes them.

- P1 open: an episode of an environment (the demo's first instance) opened until a first command
  answered, p50 and p99;
- P2 per command: ``true`` in the persistent session, against bare ``bash -c true``;
- live N: N episodes of that environment opened by ``--workers`` threads and held at once: open plus
  a first command p50/p99, errors, PSS of the sandbox processes plus the disk of the episode
  directories per episode; after closing, episode directories and sandbox processes left (leaks);
- harness: one gold evaluation of the instance against its test command run bare in an episode.
"""

from __future__ import annotations

import argparse
import os
import pwd
import statistics
import subprocess
import time

from harness import measure as harness_overhead
from held import as_user, held_rows, hold, printer, report
from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.tasks import load_tasks
from trl_env import pct


def p1(layer, repeat: int) -> dict:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        with episode_sandbox(layer) as sb:
            sb.run("true")
            samples.append((time.perf_counter() - started) * 1000)
            info = sb.info
    return {"p50_ms": statistics.median(samples), "p99_ms": pct(samples, 0.99), "route": info["route"],
            "workspace": info["workspace"], "process_limit": info["process_limit"]}


def p2(layer, repeat: int) -> dict:
    n = repeat * 25

    def timed(fn) -> float:
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - started) * 1000)
        return statistics.median(samples)
    bare = timed(lambda: subprocess.run(["bash", "-c", "true"], check=True))
    with episode_sandbox(layer) as sb:
        session = timed(lambda: sb.run("true"))
    return {"bare_ms": bare, "session_ms": session, "ratio": session / bare}


def harness(builder: EnvBuilder, task, repeat: int) -> dict:
    h, b = harness_overhead(builder, task, repeat)
    return {"harness_s": h, "bare_s": b, "overhead_pct": 100 * (h / b - 1)}


def measure(args: argparse.Namespace) -> dict:
    task = next(t for t in load_tasks(path_of("demo")) if t.FAIL_TO_PASS)
    builder = EnvBuilder()
    layer = builder.instance(task)
    figures = {"who": pwd.getpwuid(os.geteuid()).pw_name, "uid": os.geteuid(), "instance": task.instance_id,
               "p1": p1(layer, args.repeat), "p2": p2(layer, args.repeat)}
    for count in args.live:
        figures[f"live{count}"] = hold(lambda: episode_sandbox(layer), count, args.workers)
    figures["harness"] = harness(builder, task, 3)
    return figures


def table(runs: list[dict]) -> None:
    row = printer(runs)
    row("route / workspace", str, "p1", "route")
    row("process limit by", str, "p1", "process_limit")
    row("P1 open + first command p50 (ms)", lambda v: f"{v:.1f}", "p1", "p50_ms")
    row("P1 open + first command p99 (ms)", lambda v: f"{v:.1f}", "p1", "p99_ms")
    row("P2 `true`, session (ms)", lambda v: f"{v:.2f}", "p2", "session_ms")
    row("P2 `true`, bare bash (ms)", lambda v: f"{v:.2f}", "p2", "bare_ms")
    row("P2 ratio to bare", lambda v: f"{v:.2f}x", "p2", "ratio")
    held_rows(row, runs)
    row("harness: graded (s)", lambda v: f"{v:.2f}", "harness", "harness_s")
    row("harness: bare test command (s)", lambda v: f"{v:.2f}", "harness", "bare_s")
    row("harness overhead (%)", lambda v: f"{v:.1f}", "harness", "overhead_pct")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", help="also measure as this ordinary user (run as root)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--live", type=int, nargs="*", default=[256, 512])
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    runs = [measure(args)]
    if args.user:
        runs.append(as_user(args.user, __file__, ["--repeat", str(args.repeat), "--workers", str(args.workers),
                                                  "--live", *map(str, args.live)]))
    report(args, runs, table)


if __name__ == "__main__":
    main()
