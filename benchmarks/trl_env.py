"""TRL's environment class at scale: N concurrent rollouts of ``SWEWorldEnv``, real and sim side by side.

    python benchmarks/trl_env.py [--rollouts 64 256] [--backends real sim] [--steps 4] [--workers 16]

Each rollout is what ``GRPOTrainer(environment_factory=...)`` does with one environment: ``reset(**row)``
with a row of ``sweworld.integrations.trl.dataset``, K tool calls (``execute_bash("cd /testbed && ls &&
cat setup.py | head")`` and ``str_replace_editor view`` in turn; the K-th applies the task's gold fix
with ``str_replace_editor str_replace``, so that grading runs the tests), then ``get_reward()``. All N
rollouts of a batch are live at once (a trainer resets the whole batch, then calls the tools turn by
turn, then the rewards); the calls go through a thread pool of ``--workers`` threads, as a trainer's
rollout workers would. Instances: a few of one repository of the default dataset (one environment).

Printed per backend and N: step latency p50/p99 (the bash and view calls after the first), reset plus
a first command (the sandbox start is waited for there), the fix, get_reward; memory per live episode
with all N open after their K steps (RSS and PSS of every process below this one, from
``/proc/PID/smaps_rollup``, and the disk of this process's episode directories, ``disk_usage`` as in
``substrate.py``, divided by N); episodes per second (N / the batch's wall time, reset to last reward).
Afterwards it checks that nothing is left: no episode directory owned by this process, no process
below it, none naming one of its episode directories.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sweworld.core.types import Task
from sweworld.envs.store import disk_usage
from sweworld.integrations import trl as sw
from sweworld.integrations.episodes import load_tasks_of
from sweworld.sandbox import workdirs

MiB = 1024 * 1024
BASH = "cd /testbed && ls && cat setup.py | head"


def gold_edits(task: Task) -> list[tuple[str, str, str]]:
    """The task's gold patch as ``str_replace`` edits: (path, old, new) per hunk."""
    edits, path, old, new, in_hunk = [], "", [], [], False

    def flush() -> None:
        if old or new:
            edits.append((path, "\n".join(old), "\n".join(new)))
        old.clear()
        new.clear()

    for line in task.patch.splitlines():
        if line.startswith(("diff ", "@@")):
            flush()
            in_hunk = line.startswith("@@")
        elif not in_hunk and line.startswith("+++ "):
            path = "/testbed/" + line[4:].removeprefix("b/")
        elif in_hunk and (line.startswith(("-", "+", " ")) or line == ""):
            text = line[1:]
            if not line.startswith("+"):
                old.append(text)
            if not line.startswith("-"):
                new.append(text)
    flush()
    return edits


def instances(repo: str, count: int) -> list[Task]:
    """``count`` instances of ``repo`` in the default dataset whose gold patch is one hunk."""
    tasks = load_tasks_of("default", None, None)
    chosen = [t for t in tasks if t.repo == repo and len(gold_edits(t)) == 1][:count]
    if not chosen:
        raise SystemExit(f"no one-hunk instance of {repo} in the default dataset")
    return chosen


# -- what this process holds ------------------------------------------------------------------------

def _ppids() -> dict[int, int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(pid: int | None = None) -> list[int]:
    """Every process below ``pid`` (this one by default)."""
    parents, found, frontier = _ppids(), [], [pid or os.getpid()]
    while frontier:
        children = [p for p, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def rss_pss(pids: list[int]) -> tuple[int, int]:
    rss = pss = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        rss += int(re.search(r"^Rss:\s+(\d+)", text, re.M).group(1)) * 1024
        pss += int(re.search(r"^Pss:\s+(\d+)", text, re.M).group(1)) * 1024
    return rss, pss


def own_rss() -> int:
    return int(re.search(r"^VmRSS:\s+(\d+)", Path("/proc/self/status").read_text(), re.M).group(1)) * 1024


def my_episodes() -> list[Path]:
    """Episode directories whose ``owner.json`` names this process."""
    root = workdirs.root()
    return [d for d in root.iterdir() if d.is_dir() and (workdirs.read_owner(d) or {}).get("pid") == os.getpid()]


def naming(dirs: set[str]) -> list[int]:
    """Processes whose command line names one of ``dirs``, or that run in one (a sandbox's bubblewrap
    takes its arguments from a memfd; its working directory is its episode's)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            if any(d in cmdline for d in dirs) or cwd in dirs:
                found.append(int(entry))
    return found


def mem_available() -> int:
    return int(re.search(r"^MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text(), re.M).group(1)) * 1024


# -- one batch ---------------------------------------------------------------------------------------

def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


class Batch:
    """N rollouts of one factory, all live at once, driven through ``workers`` threads."""

    def __init__(self, factory: sw.EnvironmentFactory, rows: list[dict], tasks: dict[str, Task], n: int,
                 steps: int, workers: int):
        self.factory, self.tasks, self.steps, self.workers = factory, tasks, steps, workers
        self.rows = [rows[i % len(rows)] for i in range(n)]
        self.envs = [factory() for _ in range(n)]
        self.first: list[float] = []
        self.step: list[float] = []
        self.fix: list[float] = []
        self.reward: list[float] = []
        self.errors: list[str] = []
        self.seen: set[str] = set()

    def _timed(self, into: list[float], fn, *args, **kwargs):
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # a tool call that raised: TRL shows it to the model; the batch goes on
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            return None
        finally:
            into.append(time.perf_counter() - started)

    def _open(self, i: int) -> None:
        env, row = self.envs[i], self.rows[i]
        started = time.perf_counter()
        env.reset(**row)
        self._timed([], env.execute_bash, BASH)
        self.first.append(time.perf_counter() - started)

    def _turn(self, i: int, k: int) -> None:
        env = self.envs[i]
        if k == self.steps - 1:
            path, old, new = gold_edits(self.tasks[self.rows[i]["instance_id"]])[0]
            self._timed(self.fix, env.str_replace_editor, "str_replace", path, old_str=old, new_str=new)
        elif k % 2:
            self._timed(self.step, env.str_replace_editor, "view", "/testbed/setup.py")
        else:
            self._timed(self.step, env.execute_bash, BASH)

    def _grade(self, i: int) -> None:
        self._timed(self.reward, self.envs[i].get_reward)

    def run(self) -> dict:
        n = len(self.envs)
        with ThreadPoolExecutor(self.workers) as pool:
            started = time.perf_counter()
            list(pool.map(self._open, range(n)))
            for k in range(1, self.steps):
                list(pool.map(self._turn, range(n), [k] * n))
            live = my_episodes()
            self.seen = {str(d) for d in live}
            procs = descendants()
            rss, pss = rss_pss(procs)
            disk = sum(disk_usage(d) for d in live)
            driver = own_rss()
            list(pool.map(self._grade, range(n)))
            wall = time.perf_counter() - started
        results = [env.result for env in self.envs]
        return {"n": n, "live": len(live), "procs": len(procs), "rss": rss / n, "pss": pss / n, "disk": disk / n,
                "driver": driver, "wall": wall, "eps": n / wall,
                "rewards": [r.reward for r in results if r is not None],
                "failed": [r.error for r in results if r is None or r.error], "errors": self.errors}


def report(backend: str, res: dict, batch: Batch, driver_before: int) -> None:
    ms = 1000
    mean = statistics.mean(res["rewards"]) if res["rewards"] else float("nan")
    print(f"   {backend:4s} N={res['n']:3d}  step p50 {pct(batch.step, .5) * ms:6.1f} ms  p99 {pct(batch.step, .99) * ms:6.1f} ms"
          f" | reset+first command p50 {pct(batch.first, .5):5.2f} s p99 {pct(batch.first, .99):5.2f} s"
          f" | fix p50 {pct(batch.fix, .5) * ms:5.1f} ms | get_reward p50 {pct(batch.reward, .5):5.2f} s"
          f" p99 {pct(batch.reward, .99):5.2f} s")
    print(f"   {backend:4s} N={res['n']:3d}  live {res['live']} episodes, {res['procs']} processes: per episode"
          f" RSS {res['rss'] / MiB:5.2f} MiB  PSS {res['pss'] / MiB:5.2f} MiB  disk {res['disk'] / MiB:5.3f} MiB"
          f"  (+ driver RSS {(res['driver'] - driver_before) / res['n'] / MiB:5.2f} MiB)"
          f" | {res['eps']:5.2f} episodes/s ({res['wall']:6.1f} s)"
          f" | mean reward {mean:.3f}, {len(res['failed'])} failed, {len(res['errors'])} tool errors")
    for why in sorted(set(res["failed"] + res["errors"]))[:3]:
        print(f"        {why}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, nargs="+", default=[64, 256], help="concurrent rollouts (N)")
    parser.add_argument("--backends", nargs="+", default=["real", "sim"], choices=["real", "sim", "hybrid"])
    parser.add_argument("--steps", type=int, default=4, help="tool calls per rollout (K >= 2; the last is the fix)")
    parser.add_argument("--workers", type=int, default=16, help="threads driving the rollouts")
    parser.add_argument("--repo", default="pypi/cachetools", help="the repository of the default dataset's instances")
    parser.add_argument("--instances", type=int, default=4)
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (a command, then the fix)")
    tasks = instances(args.repo, args.instances)
    ids = [t.instance_id for t in tasks]
    rows = list(sw.dataset("default", instance_ids=ids))
    logs = Path(tempfile.mkdtemp(prefix="sweworld-bench-trl-"))
    factories = {b: sw.environment_factory("default", backend=b, instance_ids=ids, log_dir=logs / b)
                 for b in args.backends}
    print(f"TRL environment_factory: {len(ids)} instances of {args.repo} ({', '.join(ids)}); K={args.steps} tool calls,"
          f" {args.workers} workers, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for backend, factory in factories.items():  # builds what is missing (the real environment) and warms up
        started = time.perf_counter()
        Batch(factory, rows, {t.instance_id: t for t in tasks}, len(ids), args.steps, 1).run()
        print(f"   {backend}: first rollouts (builds what is missing, loads models) {time.perf_counter() - started:.1f} s")
    seen: set[str] = set()
    per_episode: dict[str, float] = {}
    for n in args.rollouts:
        print(f"N={n} concurrent rollouts")
        for backend, factory in factories.items():
            fits = n
            if backend in per_episode:  # the memory of an earlier N says whether N fits
                fits = min(n, int(mem_available() * 0.8 / per_episode[backend]))
                if fits < n:
                    print(f"   {backend}: {n} live episodes need ~{n * per_episode[backend] / 2**30:.1f} GiB, "
                          f"{mem_available() / 2**30:.1f} GiB available: measuring {fits}")
            driver_before = own_rss()
            batch = Batch(factory, rows, {t.instance_id: t for t in tasks}, fits, args.steps, args.workers)
            res = batch.run()
            per_episode[backend] = max(per_episode.get(backend, 0), res["pss"] + res["disk"])
            seen |= batch.seen
            report(backend, res, batch, driver_before)
            del batch
    left, procs, named = my_episodes(), descendants(), naming(seen)
    kept = ", ".join(f"{b} {disk_usage(logs / b) / max(len(f.results), 1) / 1024:.0f} KiB" for b, f in factories.items())
    shutil.rmtree(logs, ignore_errors=True)
    print(f"left behind: {len(left)} episode directories of this process, {len(procs)} processes below it, "
          f"{len(named)} naming one of its {len(seen)} episode directories (load now {os.getloadavg()[0]:.2f})")
    print(f"   evaluation logs per rollout (EnvOptions.log_dir; this script removes them): {kept}")
    return 1 if left or procs or named else 0


if __name__ == "__main__":
    raise SystemExit(main())
