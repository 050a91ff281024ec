"""The Harbor seam's cost: one ``echo hi`` through ``SweworldEnvironment.exec`` against the episode's own
``Executor.run``, in one run on one episode (goal: <= 1.2x).

Run with the Python 3.12 environment (Harbor needs it; bubblewrap and a built environment of the
instance, which the first run builds from PyPI)::

    .venv-py312/bin/python benchmarks/seam_harbor.py [--calls 200] [--instance ID] [--dataset lite]

The loops alternate in rounds of 20 on the same episode, so drift (page cache, CPU frequency) falls on
all; ``exec`` is awaited one call at a time in one event loop, as a Harbor agent awaits it. Harbor's
``exec`` is one command with its own ``cwd`` and ``env`` (a fresh ``docker exec``): a command that may
change the shell runs in a subshell of the episode's shell (``Executor.run(cmd, cwd=...)``, timed too),
one that cannot (``echo hi``: ``shell_state.stateless``) in the shell itself, as ``Executor.run`` does.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from harbor.models.task.config import EnvironmentConfig
from harbor.models.trial.paths import TrialPaths

from sweworld.integrations.harbor import SweworldEnvironment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="calls through each path (default 200)")
    parser.add_argument("--instance", default="boltons-24.0.0__change_arith_op__a5f686dc")
    parser.add_argument("--dataset", default="lite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seam-harbor-") as tmp:
        trial = TrialPaths(Path(tmp) / "trial")
        trial.mkdir()
        (Path(tmp) / "environment").mkdir()
        env = SweworldEnvironment(environment_dir=Path(tmp) / "environment", environment_name=args.instance,
                                  session_id="seam-harbor", trial_paths=trial, task_env_config=EnvironmentConfig(),
                                  instance_id=args.instance, dataset=args.dataset)
        asyncio.run(measure(env, args.calls))


async def measure(env: SweworldEnvironment, calls: int) -> None:
    await env.start(force_build=False)
    executor = env.executor
    times: dict[str, list[float]] = {"run": [], "run_cwd": [], "exec": []}
    try:
        for _ in range(5):  # warm every path
            executor.run("echo hi")
            executor.run("echo hi", cwd=executor.workdir)
            await env.exec("echo hi")
        for _ in range(max(1, calls // 20)):
            for _ in range(min(20, calls)):
                start = time.perf_counter()
                result = executor.run("echo hi")
                times["run"].append(time.perf_counter() - start)
                assert result.output == "hi\n", result
            for _ in range(min(20, calls)):
                start = time.perf_counter()
                result = executor.run("echo hi", cwd=executor.workdir)
                times["run_cwd"].append(time.perf_counter() - start)
                assert result.output == "hi\n", result
            for _ in range(min(20, calls)):
                start = time.perf_counter()
                out = await env.exec("echo hi")
                times["exec"].append(time.perf_counter() - start)
                assert out.stdout == "hi\n" and out.return_code == 0, out
    finally:
        await env.stop(delete=True)
    run_ms, cwd_ms, exec_ms = (statistics.median(times[k]) * 1e3 for k in ("run", "run_cwd", "exec"))
    n = len(times["exec"])
    print(f"Executor.run('echo hi'):                 median {run_ms:.3f} ms over {n} calls")
    print(f"Executor.run('echo hi', cwd=workdir):    median {cwd_ms:.3f} ms over {n} calls "
          "(a subshell: what exec's per-command cwd/env costs)")
    print(f"SweworldEnvironment.exec('echo hi'):     median {exec_ms:.3f} ms over {n} calls")
    print(f"ratio exec / Executor.run: {exec_ms / run_ms:.2f}x (goal <= 1.2x)")
    print(f"ratio exec / Executor.run(cwd=...): {exec_ms / cwd_ms:.2f}x (against the subshell a command that may "
          "change the shell takes)")


if __name__ == "__main__":
    main()
