"""The seccomp filter and the fresh session keyring (issue 50): what they cost and what they break,
filter on against filter off (``allow_syscalls=['*']``), measured in one run.

    python benchmarks/confinement.py [--repeat 30] [--per-repo 3] [--user NAME] [--json FILE]

- open + first command: an episode of the demo's first instance opened until ``true`` answered,
  on and off interleaved, p50/p99 and the ratio;
- per system call: 200,000 ``stat`` calls and 200 fork + exec in two live episodes, on and off;
- harness: one gold evaluation of that instance, on and off interleaved (``--harness`` times each);
- tools: what an agent and a test suite run (git, pip, pytest on the repository's own tests,
  multiprocessing, threads, asyncio, a subprocess tree, make, node where installed) in one episode
  each way: exit codes compared;
- verdicts: gold and empty patches of ``--per-repo`` instances of every repository of the embedded
  default dataset, graded on and off: verdicts compared (must be identical).

With ``--user``, run as root: measured here, then again as that ordinary user, side by side.
"""

from __future__ import annotations

import argparse
import os
import pwd
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from held import as_user, printer, report
from sweworld.backends.real import evaluate_instance
from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.harness.predictions import Prediction
from sweworld.sandbox import SandboxConfig
from sweworld.tasks import load_tasks
from trl_env import pct

ON, OFF = SandboxConfig(), SandboxConfig(allow_syscalls=["*"])
TOOLS = {
    "git": "git status --short >/dev/null && git log -1 --format=%H >/dev/null && git stash list && "
           "git diff --stat && git commit --allow-empty -qm probe",
    "pip": "python -m pip list >/dev/null && python -m pip check",
    "pytest": "python -m pytest -q -x -p no:cacheprovider >/tmp/pytest.log 2>&1",
    "multiprocessing": "python -c 'import multiprocessing as m; print(m.Pool(2).map(abs, [-1, -2]))'",
    "threads+asyncio": "python -c 'import asyncio, concurrent.futures as f; "
                       "print(asyncio.run(asyncio.sleep(0, 1)), list(f.ThreadPoolExecutor(4).map(abs, [-3])))'",
    "subprocess tree": "bash -c '(sleep 0.1 & wait) && sh -c true' && python -c 'import subprocess; "
                       "subprocess.run([\"true\"], check=True)'",
    "make": "command -v make >/dev/null || exit 0; printf 'a:\\n\\ttrue\\n' > /tmp/Makefile && make -s -f /tmp/Makefile",
    "node": "command -v node >/dev/null || exit 0; node -e 'require(\"child_process\").execSync(\"true\")'",
}


def _alternate(i: int) -> tuple:
    """On then off, or off then on: the second of a pair finds the caches the first warmed."""
    pair = (("on", ON), ("off", OFF))
    return pair if i % 2 == 0 else pair[::-1]


def opens(layer, repeat: int) -> dict:
    samples: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(repeat):
        for name, config in _alternate(i):
            started = time.perf_counter()
            with episode_sandbox(layer, config) as sb:
                sb.run("true")
            samples[name].append((time.perf_counter() - started) * 1000)
    on, off = statistics.median(samples["on"]), statistics.median(samples["off"])
    return {"on_p50_ms": on, "off_p50_ms": off, "on_p99_ms": pct(samples["on"], 0.99),
            "off_p99_ms": pct(samples["off"], 0.99), "ratio": on / off}


MICRO = {
    "stat": "python3 -c \"import os, time; t = time.process_time(); "
            "[os.stat('/testbed') for _ in range(200000)]; print(time.process_time() - t)\"",
    "fork": "python3 -c \"import subprocess, time; t = time.perf_counter(); "
            "[subprocess.run(['true']) for _ in range(200)]; print(time.perf_counter() - t)\"",
}
"""The filter's cost where it is paid, per system call: 200,000 ``stat`` calls (the CPU time of the
process that makes them, steadier than wall time on a shared machine), 200 fork + exec (wall)."""


def micro(layer, repeat: int) -> dict:
    """Each of ``MICRO`` in two live episodes, filter on and off, alternated: median seconds and ratio."""
    got: dict[tuple[str, str], list[float]] = {}
    with episode_sandbox(layer, ON) as on, episode_sandbox(layer, OFF) as off:
        for name, command in MICRO.items():
            for i in range(repeat):
                for label, _config in _alternate(i):
                    got.setdefault((name, label), []).append(float((on if label == "on" else off).run(command).output))
    figures = {}
    for name in MICRO:
        a, b = statistics.median(got[(name, "on")]), statistics.median(got[(name, "off")])
        figures |= {f"{name}_on_s": a, f"{name}_off_s": b, f"{name}_ratio": a / b}
    return figures


def evaluation(builder: EnvBuilder, task, config: SandboxConfig, patch: str) -> tuple[tuple, float]:
    """((resolved, resolution, error kind, F2P/P2P failures), seconds) of one evaluation of ``patch``."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        report_ = evaluate_instance(task, Prediction(instance_id=task.instance_id, model_patch=patch),
                                    Path(tmp) / task.instance_id, builder=builder, timeout=900,
                                    config=config.model_copy(update={"timeout": 900}))
        status = report_.tests_status or {}
        failures = tuple(sorted(t for group in status.values() for t in group.get("failure", [])))
        verdict = (report_.resolved, report_.resolution, report_.error_kind, failures)
        return verdict, time.perf_counter() - started


def harness(builder: EnvBuilder, task, repeat: int) -> dict:
    times: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(repeat):
        for name, config in _alternate(i):
            times[name].append(evaluation(builder, task, config, task.patch)[1])
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    return {"on_s": on, "off_s": off, "overhead_pct": 100 * (on / off - 1)}


def tools(layer) -> dict:
    codes: dict[str, dict[str, int]] = {}
    for name, config in (("on", ON), ("off", OFF)):
        with episode_sandbox(layer, config) as sb:
            for tool, command in TOOLS.items():
                codes.setdefault(tool, {})[name] = sb.run(f"( {command} )", timeout=600).exit_code
    differ = sorted(tool for tool, got in codes.items() if got["on"] != got["off"])
    return {"same": len(codes) - len(differ), "total": len(codes), "differ": ", ".join(differ) or "none"}


def verdicts(builder: EnvBuilder, per_repo: int) -> dict:
    by_repo = defaultdict(list)
    for task in load_tasks(path_of("default")):
        if task.FAIL_TO_PASS and len(by_repo[task.repo]) < per_repo:
            by_repo[task.repo].append(task)
    same = graded = 0
    differ: list[str] = []
    for task in (t for tasks in by_repo.values() for t in tasks):
        for label, patch in (("gold", task.patch), ("empty", "")):
            got = [evaluation(builder, task, config, patch)[0] for config in (ON, OFF)]  # verdicts: order is moot
            graded += 1
            same += got[0] == got[1]
            if got[0] != got[1]:
                differ.append(f"{task.instance_id} {label}: on {got[0][:3]} off {got[1][:3]}")
    return {"graded": graded, "same": same, "differ": "; ".join(differ) or "none"}


def measure(args: argparse.Namespace) -> dict:
    task = next(t for t in load_tasks(path_of("demo")) if t.FAIL_TO_PASS)
    builder = EnvBuilder()
    layer = builder.instance(task)
    figures = {"who": pwd.getpwuid(os.geteuid()).pw_name, "uid": os.geteuid(), "instance": task.instance_id,
               "open": opens(layer, args.repeat), "micro": micro(layer, 12),
               "harness": harness(builder, task, args.harness),
               "tools": tools(layer)}
    if args.per_repo:
        figures["verdicts"] = verdicts(builder, args.per_repo)
    return figures


def table(runs: list[dict]) -> None:
    row = printer(runs)
    ms = lambda v: f"{v:.1f}"  # noqa: E731
    row("open + first command p50, filter on (ms)", ms, "open", "on_p50_ms")
    row("open + first command p50, filter off (ms)", ms, "open", "off_p50_ms")
    row("open + first command p99, on / off (ms)", ms, "open", "on_p99_ms")
    row("", ms, "open", "off_p99_ms")
    row("ratio on / off (p50)", lambda v: f"{v:.3f}x", "open", "ratio")
    row("200,000 stat calls, CPU time on / off (ratio)", lambda v: f"{v:.3f}x", "micro", "stat_ratio")
    row("200 fork + exec, on / off (ratio)", lambda v: f"{v:.3f}x", "micro", "fork_ratio")
    row("gold evaluation, on (s)", lambda v: f"{v:.2f}", "harness", "on_s")
    row("gold evaluation, off (s)", lambda v: f"{v:.2f}", "harness", "off_s")
    row("harness overhead (%)", lambda v: f"{v:+.1f}", "harness", "overhead_pct")
    row("tools with the same exit code", str, "tools", "same")
    row("tools tried", str, "tools", "total")
    row("tools that differ", str, "tools", "differ")
    row("verdicts graded (default dataset, gold + empty)", str, "verdicts", "graded")
    row("verdicts the same on and off", str, "verdicts", "same")
    row("verdicts that differ", str, "verdicts", "differ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--harness", type=int, default=3)
    parser.add_argument("--per-repo", type=int, default=3)
    parser.add_argument("--user", help="also measure as this ordinary user (run as root)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    runs = [measure(args)]
    if args.user:
        runs.append(as_user(args.user, __file__, ["--repeat", str(args.repeat), "--harness", str(args.harness),
                                                  "--per-repo", str(args.per_repo)]))
    report(args, runs, table)


if __name__ == "__main__":
    main()
