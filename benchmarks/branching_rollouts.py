"""K branches of one prefix against K full rollouts, on the same tasks, measured in one run (issue 45).

    python benchmarks/branching_rollouts.py [--dataset default] [--per-repo 1] [--branches 4] \
        [--test-runs 3] [--repeat 2] [--eval] [--workers 1]

The policy (``TestsThenPerturb``, scripted, per sample like ``perturb``) does real work in its
prefix: it runs the task's test files ``--test-runs`` times (the prefix is exactly those steps:
``--branch-at`` = ``--test-runs``), then views the code, makes perturb's edit of its sample (the gold
patch with probability 0.5, else a plausible wrong or partial edit), runs the failing tests once and
submits. Both modes make the same K samples per task (the same patches: checked and printed):

- ``full``: ``sweworld rollout --n-samples K``: K episodes, each running the prefix;
- ``branched``: ``sweworld rollout --branch-at R --branches K``: one episode runs the prefix, K-1
  forks of its snapshot and the episode itself go on.

Per mode: wall seconds, CPU seconds of this process and every process it starts (the sandboxes,
their spares, their shells and commands; ``CpuMeter``: a cpuacct cgroup of its own where it can
make one, else a lower bound from ``getrusage`` and ``/proc``), and the steps executed. No evaluation unless ``--eval`` (both modes grade
the same K patches). The tasks: the first ``--per-repo`` tasks of each repository of the dataset.
One warm-up rollout per task first (environments built, caches warm); the modes then alternate
``--repeat`` times and the ratios are of the sums.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import tempfile
import time
from functools import partial
from pathlib import Path

from sweworld.agents.config import load_agent_config
from sweworld.agents.perturb import PerturbPolicy
from sweworld.agents.regions import Plan, PlanPolicy
from sweworld.backends.real import RealBackend
from sweworld.core.config import RolloutConfig, RunnerConfig, Timeouts
from sweworld.core.types import Task
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.synth import mutations_for_file
from sweworld.tasks import load_tasks

TICK = os.sysconf("SC_CLK_TCK")
FLAGS = ("-q", "-q --tb=short", "-v", "-q -x")


class TestsThenPerturb(PlanPolicy):
    """The task's test files run ``runs`` times, then perturb's views and edit, the failing tests, submit."""

    name = "tests-then-perturb"
    __test__ = False

    def __init__(self, runs: int = 3, p: float = 0.5, seed: int = 0, mutate=None, workdir: str = "/testbed"):
        super().__init__(seed=seed, workdir=workdir)
        self.runs = runs
        self.editor = PerturbPolicy(p=p, seed=seed, mutate=mutate, workdir=workdir)

    def plan(self, task: Task) -> Plan:
        self.editor.bind(task.instance_id, self.sample).reset(task)
        files = sorted({t.split("::")[0] for t in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]})
        quoted = " ".join(shlex.quote(f) for f in files)
        for i in range(self.runs):  # not three identical actions in a row (the loop's stuck rule)
            flags = FLAGS[i % len(FLAGS)]
            yield ("execute_bash", {"command": f"cd {self.workdir} && python -m pytest {flags} -p no:cacheprovider "
                                               f"{quoted} 2>&1 | tail -n {5 + i}"}, f"run the tests ({i + 1})")
        sites = yield from self.editor.read(task)
        marker = yield from self.editor.edits(task, sites)
        failing = " ".join(shlex.quote(t) for t in task.FAIL_TO_PASS[:5])
        yield ("execute_bash", {"command": f"cd {self.workdir} && python -m pytest -q -p no:cacheprovider {failing} "
                                           "2>&1 | tail -n 5"}, f"{marker}\nrun the failing tests".lstrip())
        yield "submit", {}, "submit"


# -- CPU of this process and everything below it ----------------------------------------------------

class CpuMeter:
    """CPU seconds of this process and of every process it starts, dead or alive.

    ``cgroup``: this process in a cpuacct cgroup of its own (cgroup v1; made when it can be, as root),
    which counts every process it starts. Else ``rusage``: ``getrusage`` of this process and its
    reaped children plus ``/proc`` of its live descendants: a lower bound, since the processes of a
    closed sandbox end with its pid namespace and are reaped by no ancestor of this one."""

    def __init__(self) -> None:
        self.group: Path | None = None
        root = next((Path(line.split()[1]) for line in Path("/proc/mounts").read_text().splitlines()
                     if line.split()[2] == "cgroup" and "cpuacct" in line.split()[3].split(",")), None)
        if root is not None:
            try:
                group = root / f"sweworld-bench-{os.getpid()}"
                group.mkdir()
                (group / "cgroup.procs").write_text(str(os.getpid()))
                self.group, self.root = group, root
            except OSError:
                self.group = None
        self.method = "cgroup" if self.group else "rusage"

    def seconds(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        stats, below, frontier = _stats(), 0.0, {os.getpid()}
        while frontier:
            children = {pid for pid, (parent, _) in stats.items() if parent in frontier}
            below += sum(stats[pid][1] for pid in children)
            frontier = children
        return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime + below

    def close(self) -> None:
        """Back to the parent cgroup; the group is removed once its last process has ended."""
        if self.group is None:
            return
        (self.root / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(50):
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)
        print(f"note: {self.group} still holds processes; remove it once they end (rmdir)")


def _stats() -> dict[int, tuple[int, float]]:
    """pid -> (parent, CPU seconds of it and its reaped children) of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[int(entry)] = (int(fields[1]), sum(int(f) for f in fields[11:15]) / TICK)
    return found


def per_repo(tasks: list[Task], n: int) -> list[Task]:
    seen: dict[str, int] = {}
    chosen = []
    for task in tasks:
        seen[task.repo] = seen.get(task.repo, 0) + 1
        if seen[task.repo] <= n and task.FAIL_TO_PASS:
            chosen.append(task)
    return chosen


def roll(tasks, make, backend, meter: CpuMeter, out: Path, evaluate: bool, workers: int, **branching) -> dict:
    run = RolloutConfig(out=out, evaluate=evaluate, runner=RunnerConfig(workers=workers),
                        timeouts=Timeouts(command=120.0, evaluation=300.0), **branching)
    cpu, started = meter.seconds(), time.perf_counter()
    summary = run_rollouts(tasks, make, run, agent=load_agent_config(), backend=backend)
    wall, cpu = time.perf_counter() - started, meter.seconds() - cpu
    found = TrajectoryStore(out / "trajectories.jsonl").load()
    executed = sum(len(t.steps) - (t.prefix_steps or 0) * (t.branch not in (None, 0)) for t in found)
    return {"wall": wall, "cpu": cpu, "steps": executed, "errors": summary.get("errors", 0),
            "patches": {t.key: t.patch for t in found}, "rewards": {t.key: t.reward for t in found},
            "ended": summary.get("branching", {}).get("ended_in_prefix", 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="default")
    parser.add_argument("--per-repo", type=int, default=1, help="tasks per repository of the dataset")
    parser.add_argument("--branches", type=int, default=4, help="K: samples per task")
    parser.add_argument("--test-runs", type=int, default=3, help="test-file runs of the prefix (= --branch-at)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--eval", action="store_true", help="grade every sample (the same K patches in both modes)")
    args = parser.parse_args()
    tasks = per_repo(load_tasks(path_of(args.dataset)), args.per_repo)
    make = partial(TestsThenPerturb, runs=args.test_runs, mutate=mutations_for_file)
    backend = RealBackend()
    k, totals = args.branches, {"full": [], "branched": []}
    meter = CpuMeter()
    print(f"{len(tasks)} tasks of {args.dataset} ({args.per_repo} per repository), K = {k} samples per task, "
          f"prefix = {args.test_runs} test-file runs, workers = {args.workers}, "
          f"{'with' if args.eval else 'no'} evaluation, CPU by {meter.method}")
    with tempfile.TemporaryDirectory(prefix="bench-branching-") as tmp:
        warm = roll(tasks, make, backend, meter, Path(tmp) / "warm", False, args.workers)
        print(f"  warm-up (1 sample per task): {warm['wall']:.1f} s wall, {warm['errors']} errors")
        for round_ in range(args.repeat):
            for mode in ("full", "branched"):
                options = {"n_samples": k} if mode == "full" else {"branch_at": args.test_runs, "branches": k}
                result = roll(tasks, make, backend, meter, Path(tmp) / f"{mode}{round_}", args.eval, args.workers,
                              **options)
                totals[mode].append(result)
                print(f"  round {round_ + 1} {mode:8s}: {result['wall']:7.1f} s wall  {result['cpu']:7.1f} s CPU  "
                      f"{result['steps']:5d} steps executed  {result['errors']} errors"
                      + (f"  {result['ended']} ended in the prefix" if mode == "branched" else ""))
            full, branched = totals["full"][-1], totals["branched"][-1]
            same = sum(full["patches"].get(key) == patch for key, patch in branched["patches"].items())
            print(f"           same patches as the full rollouts: {same}/{len(full['patches'])}"
                  + (f", same rewards: {sum(full['rewards'].get(k_) == r for k_, r in branched['rewards'].items())}"
                     f"/{len(full['rewards'])}" if args.eval else ""))

    meter.close()

    def total(mode: str, what: str) -> float:
        return sum(r[what] for r in totals[mode])

    print(f"branched / full over {args.repeat} rounds: wall {total('branched', 'wall') / total('full', 'wall'):.2f}x, "
          f"CPU {total('branched', 'cpu') / total('full', 'cpu'):.2f}x, "
          f"steps executed {total('branched', 'steps') / total('full', 'steps'):.2f}x "
          f"(the prefix's share of a full episode's steps: {args.test_runs}/"
          f"{total('full', 'steps') / (args.repeat * len(tasks) * k):.1f})")


if __name__ == "__main__":
    main()
