"""What the substrate benchmarks share: many episodes held at once, the same script rerun as an
ordinary user, and their side-by-side table rows."""

from __future__ import annotations

import json
import os
import pwd
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trl_env import descendants, disk_usage, my_episodes, naming, pct, rss_pss


def hold(make: Callable[[], object], count: int, workers: int) -> dict:
    """``count`` episodes from ``make`` opened by ``workers`` threads and held at once: open plus a
    first command p50/p99, errors, PSS of the sandbox processes and disk of the episode directories
    per episode; after closing, the episode directories and sandbox processes left (leaks)."""
    held, errors, latencies = [], [], []

    def one(_: int) -> None:
        started = time.perf_counter()
        try:
            episode = make()
            episode.run("true")
        except Exception as exc:  # counted: the figure is how many fail
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            return
        latencies.append(time.perf_counter() - started)
        held.append(episode)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(count)))
    episodes = my_episodes()
    _rss, pss = rss_pss(descendants())
    disk = sum(disk_usage(d) for d in episodes)
    dirs = {str(d) for d in episodes}
    for episode in held:
        episode.close()
    time.sleep(1)
    n = max(len(held), 1)
    return {"episodes": len(held), "errors": len(errors), "first_errors": errors[:3],
            "open_p50_s": statistics.median(latencies) if latencies else None,
            "open_p99_s": pct(latencies, 0.99) if latencies else None,
            "pss_mib_each": pss / n / 2**20, "disk_mib_each": disk / n / 2**20,
            "left_dirs": sum(1 for d in episodes if d.exists()), "left_processes": len(naming(dirs))}


def as_user(user: str, script: str, argv: list[str], drop: tuple[str, ...] = ()) -> dict:
    """``script`` run again as ``user`` with ``argv`` and ``--json FILE`` (its own cache under its
    home: the ``SWEWORLD_``, ``XDG_`` and ``VIRTUAL_ENV`` variables and ``drop`` left out); its figures."""
    home = pwd.getpwnam(user).pw_dir
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    os.chmod(path, 0o666)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWEWORLD_", "XDG_", "VIRTUAL_ENV", *drop))}
    env.update(HOME=home, USER=user, LOGNAME=user, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run(["runuser", "-u", user, "--", sys.executable, str(Path(script).resolve()), *argv, "--json", path],
                   env=env, check=True)
    figures = json.loads(Path(path).read_text())
    os.unlink(path)
    return figures


def printer(runs: list[dict]) -> Callable[..., None]:
    """Prints the table's header, and returns ``row(label, fmt, key, sub)`` printing one row of it."""
    print("| figure | " + " | ".join(f"{r['who']} (uid {r['uid']})" for r in runs) + " |")
    print("| --- | " + " | ".join("---:" for _ in runs) + " |")

    def row(label: str, fmt, key: str, sub: str) -> None:
        cells = ["-" if run.get(key, {}).get(sub) is None else fmt(run[key][sub]) for run in runs]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return row


def held_rows(row: Callable[..., None], runs: list[dict], what: str = "live") -> None:
    """The rows of every ``live<N>`` figure ``hold`` gave."""
    for key in sorted((k for k in runs[0] if k.startswith("live")), key=lambda k: int(k[4:])):
        count = key[4:]
        row(f"{count} {what}: opened", str, key, "episodes")
        row(f"{count} live: errors", str, key, "errors")
        row(f"{count} live: open + first command p50 (s)", lambda v: f"{v:.2f}", key, "open_p50_s")
        row(f"{count} live: open + first command p99 (s)", lambda v: f"{v:.2f}", key, "open_p99_s")
        row(f"{count} live: PSS per episode (MiB)", lambda v: f"{v:.2f}", key, "pss_mib_each")
        row(f"{count} live: disk per episode (MiB)", lambda v: f"{v:.3f}", key, "disk_mib_each")
        row(f"{count} live: left after close (dirs)", str, key, "left_dirs")
        row(f"{count} live: left after close (processes)", str, key, "left_processes")


def report(args, runs: list[dict], table: Callable[[list[dict]], None]) -> None:
    """``--json FILE`` gets the figures (this run's alone when it is the rerun as a user); the table is
    printed unless this is that rerun."""
    if args.json:
        Path(args.json).write_text(json.dumps(runs[0] if not args.user else runs, indent=2))
    if not args.json or args.user:
        table(runs)
