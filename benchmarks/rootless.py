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
import json
import os
import pwd
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import measure as harness_overhead
from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.tasks import load_tasks
from trl_env import descendants, disk_usage, my_episodes, naming, pct, rss_pss


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


def live(layer, count: int, workers: int) -> dict:
    opened, errors, latencies = [], [], []

    def one(_: int) -> None:
        started = time.perf_counter()
        try:
            sb = episode_sandbox(layer)
            sb.run("true")
        except Exception as exc:  # counted: the figure is how many fail
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            return
        latencies.append(time.perf_counter() - started)
        opened.append(sb)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(count)))
    episodes = my_episodes()
    _rss, pss = rss_pss(descendants())
    disk = sum(disk_usage(d) for d in episodes)
    dirs = {str(d) for d in episodes}
    for sb in opened:
        sb.close()
    time.sleep(1)
    left_dirs = [d for d in episodes if d.exists()]
    left_procs = naming(dirs)
    n = max(len(opened), 1)
    return {"episodes": len(opened), "errors": len(errors), "first_errors": errors[:3],
            "open_p50_s": statistics.median(latencies) if latencies else None,
            "open_p99_s": pct(latencies, 0.99) if latencies else None,
            "pss_mib_each": pss / n / 2**20, "disk_mib_each": disk / n / 2**20,
            "left_dirs": len(left_dirs), "left_processes": len(left_procs)}


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
        figures[f"live{count}"] = live(layer, count, args.workers)
    figures["harness"] = harness(builder, task, 3)
    return figures


def as_user(user: str, args: argparse.Namespace) -> dict:
    """This script as ``user``, its own cache under its home; its figures."""
    home = pwd.getpwnam(user).pw_dir
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    os.chmod(path, 0o666)
    argv = [sys.executable, str(Path(__file__).resolve()), "--repeat", str(args.repeat), "--workers",
            str(args.workers), "--live", *map(str, args.live), "--json", path]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWEWORLD_", "XDG_", "VIRTUAL_ENV"))}
    env.update(HOME=home, USER=user, LOGNAME=user, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run(["runuser", "-u", user, "--", *argv], env=env, check=True)
    figures = json.loads(Path(path).read_text())
    os.unlink(path)
    return figures


def table(runs: list[dict]) -> None:
    def row(label: str, fmt, key: str, sub: str) -> None:
        cells = []
        for run in runs:
            value = run.get(key, {}).get(sub)
            cells.append("-" if value is None else fmt(value))
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| figure | " + " | ".join(f"{r['who']} (uid {r['uid']})" for r in runs) + " |")
    print("| --- | " + " | ".join("---:" for _ in runs) + " |")
    row("route / workspace", str, "p1", "route")
    row("process limit by", str, "p1", "process_limit")
    row("P1 open + first command p50 (ms)", lambda v: f"{v:.1f}", "p1", "p50_ms")
    row("P1 open + first command p99 (ms)", lambda v: f"{v:.1f}", "p1", "p99_ms")
    row("P2 `true`, session (ms)", lambda v: f"{v:.2f}", "p2", "session_ms")
    row("P2 `true`, bare bash (ms)", lambda v: f"{v:.2f}", "p2", "bare_ms")
    row("P2 ratio to bare", lambda v: f"{v:.2f}x", "p2", "ratio")
    for key in sorted((k for k in runs[0] if k.startswith("live")), key=lambda k: int(k[4:])):
        n = key[4:]
        row(f"{n} live: opened", lambda v: str(v), key, "episodes")
        row(f"{n} live: errors", lambda v: str(v), key, "errors")
        row(f"{n} live: open + first command p50 (s)", lambda v: f"{v:.2f}", key, "open_p50_s")
        row(f"{n} live: open + first command p99 (s)", lambda v: f"{v:.2f}", key, "open_p99_s")
        row(f"{n} live: PSS per episode (MiB)", lambda v: f"{v:.2f}", key, "pss_mib_each")
        row(f"{n} live: disk per episode (MiB)", lambda v: f"{v:.3f}", key, "disk_mib_each")
        row(f"{n} live: left after close (dirs)", str, key, "left_dirs")
        row(f"{n} live: left after close (processes)", str, key, "left_processes")
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
        runs.append(as_user(args.user, args))
    if args.json:
        Path(args.json).write_text(json.dumps(runs[0] if not args.user else runs, indent=2))
    if not args.json or args.user:
        table(runs)


if __name__ == "__main__":
    main()
