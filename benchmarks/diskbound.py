"""Total disk and inode bounds of an episode (issue 50): their overhead and how far a fast writer gets.

    python benchmarks/diskbound.py [--repo DIR] [--repeat 20] [--overshoots 3]

``--repo`` (default: a small generated tree) is any directory tree, mounted read-only as the
episode's base. Measured in one run, bounded (``SandboxConfig`` defaults: ``disk``, ``inodes``)
against unbounded (``disk=None, inodes=None``: no watcher), interleaved:

- ``open``: open + first command (``echo``), ``--repeat`` times;
- ``1000 files``: a command writing 1,000 small files (a fresh directory each time), ``--repeat``
  times in one bounded episode, measured by the watcher or not in turn (two episodes differ more
  from each other than the bound costs), and the CPU the watcher thread spent measuring;
- ``overshoot``: a fast writer left to run past a small bound (``dd`` of zeros into ``/tmp`` past a
  256 MiB byte bound; ``xargs touch`` past a 20,000 inode bound), ``--overshoots`` times: what the
  episode held when it was ended, past the bound, beside the writer's rate measured unbounded;
- ``latency``: a writer that passes the byte bound, notes the time and sleeps: the time from that
  note to the command raising ``DiskBoundError``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sweworld.sandbox import Layers, Sandbox, SandboxConfig, diskbound
from sweworld.sandbox.diskbound import DiskBoundError

MiB = 2**20
UNBOUNDED = SandboxConfig(disk=None, inodes=None)
BOUNDED = SandboxConfig()
WRITE_1000 = "rm -rf /tmp/w && mkdir /tmp/w && cd /tmp/w && for i in $(seq 1000); do echo x > f$i; done"
BYTES = "dd if=/dev/zero of=/tmp/big bs=1M count=3000 status=none"
FILES = "mkdir /tmp/many && cd /tmp/many && seq 400000 | xargs touch"


def small_repo(root: Path) -> Path:
    repo = root / "repo"
    for n in range(200):
        (repo / f"pkg{n % 10}").mkdir(parents=True, exist_ok=True)
        (repo / f"pkg{n % 10}" / f"mod{n}.py").write_text(f"VALUE = {n}\n" * 20)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def opening(repo: Path, config: SandboxConfig) -> None:
    with Sandbox({"/testbed": Layers([repo])}, config=config) as sb:
        assert sb.run("echo ok").output == "ok\n"


def overhead(repo: Path, repeat: int) -> None:
    samples: dict[str, list[float]] = {"bounded": [], "unbounded": []}
    for _ in range(repeat):
        for name, config in (("unbounded", UNBOUNDED), ("bounded", BOUNDED)):
            samples[name].append(timed(lambda config=config: opening(repo, config)))
    report("open + first command", samples)
    samples = {"bounded": [], "unbounded": []}
    cpu = WatcherCpu()
    measuring = diskbound.Watch.check
    with Sandbox({"/testbed": Layers([repo])}, config=BOUNDED) as sb:
        for n in range(repeat):
            for name in ("unbounded", "bounded") if n % 2 else ("bounded", "unbounded"):
                diskbound.Watch.check = measuring if name == "bounded" else (lambda watch: None)
                samples[name].append(timed(lambda: sb.run(WRITE_1000)))
    diskbound.Watch.check = measuring
    report("a command writing 1,000 files", samples)
    print(f"{'watcher CPU':32s} {cpu.seconds * 1000 / repeat:.1f} ms per such command ({cpu.checks / repeat:.1f} "
          f"measurements), {cpu.seconds / sum(samples['bounded']):.1%} of the bounded commands' wall time", flush=True)


def report(what: str, samples: dict[str, list[float]]) -> None:
    for name, pick in (("median", statistics.median), ("min", min)):
        free, bound = pick(samples["unbounded"]), pick(samples["bounded"])
        print(f"{what:32s} {name:6s} unbounded {free * 1000:8.1f} ms  bounded {bound * 1000:8.1f} ms  "
              f"ratio {bound / free:.3f} (of {len(samples['bounded'])})", flush=True)


class WatcherCpu:
    """CPU time the watcher thread spends measuring (``Watch.check`` timed by ``thread_time``)."""

    def __init__(self) -> None:
        self.seconds, self.checks = 0.0, 0
        self._check = diskbound.Watch.check

        def check(watch):
            started = time.thread_time()
            try:
                return self._check(watch)
            finally:
                self.seconds += time.thread_time() - started
                self.checks += 1
        diskbound.Watch.check = check


def rate(repo: Path, command: str, bound: str) -> float:
    """The writer's rate with no bound: bytes (``bound`` "disk") or inodes per second."""
    with Sandbox({"/testbed": Layers([repo])}, config=UNBOUNDED) as sb:
        took = sb.run(command, timeout=600).duration
        usage = sb.disk_usage()
    amount = usage.bytes if bound == "disk" else usage.inodes
    return amount / took


def overshoot(repo: Path, command: str, config: SandboxConfig, bound: str) -> None:
    per_s = rate(repo, command, bound)
    limit = config.disk if bound == "disk" else config.inodes
    assert limit is not None
    with Sandbox({"/testbed": Layers([repo])}, config=config) as sb:
        sb.run("true")
        started = time.perf_counter()
        try:
            sb.run(command + "; sleep 600", timeout=900)
            print(f"overshoot ({bound}): NOT ENDED", flush=True)
            return
        except DiskBoundError as exc:
            took, seen = time.perf_counter() - started, exc.held
        left = sb.disk_usage()
    final = left.bytes if bound == "disk" else left.inodes
    fmt = (lambda v: f"{v / MiB:.1f} MiB") if bound == "disk" else (lambda v: f"{v:,.0f} inodes")
    print(f"overshoot ({bound}, bound {fmt(limit)}): ended {took:.2f} s after the command began; seen at "
          f"{fmt(seen)} (+{fmt(seen - limit)}), held once ended {fmt(final)} (+{fmt(final - limit)}); the "
          f"writer's rate until then {fmt(final / took)}/s, sustained (unbounded) {fmt(per_s)}/s", flush=True)


def latency(repo: Path, repeat: int) -> None:
    samples = []
    config = SandboxConfig(disk=64 * MiB)
    for _ in range(repeat):
        with Sandbox({"/testbed": Layers([repo])}, config=config) as sb:
            try:
                sb.run("dd if=/dev/zero of=/tmp/big bs=1M count=80 status=none; date +%s.%N > /tmp/passed; "
                       "sleep 600", timeout=900)
            except DiskBoundError:
                ended = time.time()
                samples.append(ended - float((sb.episode_dir / "tmp" / "passed").read_text()))
    print(f"{'passing the bound to the return':32s} p50 {statistics.median(samples) * 1000:.0f} ms  "
          f"max {max(samples) * 1000:.0f} ms (of {len(samples)}; interval {diskbound.INTERVAL:g} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--overshoots", type=int, default=3, help="runs of each fast writer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sweworld-bench-") as tmp:
        repo = args.repo or small_repo(Path(tmp))
        print(f"python {sys.version.split()[0]}; bounds by default: {diskbound.describe(BOUNDED.disk, BOUNDED.inodes)}")
        overhead(repo, args.repeat)
        for _ in range(args.overshoots):
            overshoot(repo, BYTES, SandboxConfig(disk=256 * MiB, inodes=None), "disk")
            overshoot(repo, FILES, SandboxConfig(disk=None, inodes=20_000), "inodes")
        latency(repo, max(3, args.repeat // 4))


if __name__ == "__main__":
    main()
