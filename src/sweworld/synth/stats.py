"""Counts and costs of a synthesis run: yield per method, runs, and validated instances per CPU-hour.

Two CPU measures: ``core_hours`` = wall time x workers (the cores the run held; conservative) and
``cpu_hours`` = the run's own user + system time (``own_cpu_seconds``: this process, every thread of
it, and its children: the sandboxes and builds it started), not the machine's.

``own_cpu_seconds`` adds three things: ``os.times()`` of this process (all its threads, so a thread
pool's workers are in it), the times of the children it has waited for (``children_user`` +
``children_system``: a sandbox's processes are waited for by their parents inside it, so a finished
sandbox is in these), and the times of the descendants still alive (``/proc/<pid>/stat``: a warm
sandbox, a build in flight). A difference of two readings is what the run spent between them. What it
does not see: processes that left this process's tree (a daemon that double-forked out of a sandbox
without a PID namespace) and work done in other processes (a Ray worker's: measure there and add up,
as ``mine.pipeline`` does for ``--runner ray``). ``machine_cpu_seconds`` is the whole machine's
(``/proc/stat``), kept for diagnosis.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any


def machine_cpu_seconds() -> float | None:
    """User + nice + system + irq time of all CPUs since boot, in seconds (None off Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _descendants_cpu(root: int) -> float:
    """User + system time of the live descendants of ``root`` (each with its reaped children), read
    from ``/proc``; 0 off Linux."""
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0.0
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        parent[pid] = int(fields[1])  # fields after the name: state, ppid, ...; utime is field 14 of stat
        ticks[pid] = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """User + system time of this process (all threads), of its children waited for and of its live
    descendants, in seconds (see the module docstring)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + _descendants_cpu(os.getpid())


@dataclass
class SynthStats:
    repo: str
    naive: bool
    workers: int
    seed: int
    library_files: int = 0
    suite_tests: int = 0
    suite_seconds: float = 0.0
    prepare_seconds: float = 0.0
    seconds: float = 0.0
    cpu_seconds: float | None = None
    methods: dict[str, dict[str, int]] = field(default_factory=dict)
    screen_runs: int = 0
    suite_runs: int = 0
    _t0: float = 0.0
    _cpu0: float | None = None

    def start(self) -> None:
        self._t0, self._cpu0 = time.monotonic(), own_cpu_seconds()

    def prepared(self, release: Any) -> None:
        self.prepare_seconds = round(time.monotonic() - self._t0, 2)
        self.library_files = len(release.files)
        self.suite_tests = len(release.baseline)
        self.suite_seconds = round(release.suite_seconds, 2)

    def add(self, outcome: Any) -> None:
        counts = self.methods.setdefault(outcome.method, {})
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        self.screen_runs += int(outcome.screened)
        self.suite_runs += int(outcome.suite_run)

    def finish(self) -> None:
        self.seconds = round(time.monotonic() - self._t0, 2)
        if self._cpu0 is not None:
            self.cpu_seconds = round(own_cpu_seconds() - self._cpu0, 2)

    @property
    def validated(self) -> int:
        return sum(c.get("validated", 0) for c in self.methods.values())

    @property
    def candidates(self) -> int:
        return sum(sum(c.values()) for c in self.methods.values())

    def per_hour(self, seconds: float | None) -> float | None:
        return round(self.validated * 3600 / seconds, 1) if seconds else None

    def yields(self) -> dict[str, dict[str, Any]]:
        """Per method: candidates, validated, yield, and the other verdicts."""
        out = {}
        for method, counts in sorted(self.methods.items()):
            checked = sum(counts.values())
            out[method] = {"candidates": checked, "validated": counts.get("validated", 0),
                           "yield": round(counts.get("validated", 0) / checked, 3) if checked else 0.0, **counts}
        return out

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        data.update(candidates=self.candidates, validated=self.validated, yields=self.yields(),
                    core_hours=round(self.seconds * self.workers / 3600, 4),
                    validated_per_core_hour=self.per_hour(self.seconds * self.workers),
                    validated_per_cpu_hour=self.per_hour(self.cpu_seconds))
        return data
