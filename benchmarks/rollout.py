"""Environment steps per second with the built-in policies, 1 vs 2 workers, measured in one run.

    python benchmarks/rollout.py [--samples 4]

Each episode is a fresh isolated sandbox over a built environment (the open and close are counted),
the agent loop, and the final diff; no evaluation (that is P5's business). Steps/s = total tool
calls / wall time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import NoopPolicy, OraclePolicy
from sweworld.backends.real import RealBackend
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.tasks import load_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4, help="samples per instance")
    args = parser.parse_args()
    tasks = [t for t in load_tasks(path_of("demo")) if t.FAIL_TO_PASS]
    backend = RealBackend()
    for task in tasks:
        backend.prepare(task)
    config = load_agent_config()
    print(f"env steps per second ({len(tasks)} instances x {args.samples} samples, no evaluation)")
    for name, policy in (("noop", NoopPolicy), ("oracle", OraclePolicy)):
        rates = {}
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                run_rollouts(tasks, policy,
                             RolloutConfig(out=Path(tmp), n_samples=args.samples, runner=RunnerConfig(workers=workers), evaluate=False),
                             agent=config, backend=backend)
                wall = time.perf_counter() - started
                steps = sum(len(t.steps) for t in TrajectoryStore(Path(tmp) / "trajectories.jsonl").load())
            rates[workers] = steps / wall
            print(f"   {name:6s} workers={workers}  {steps:4d} steps in {wall:6.2f} s  {rates[workers]:7.1f} steps/s  "
                  f"{len(tasks) * args.samples / wall:5.1f} episodes/s")
        print(f"   {name:6s} 2 workers / 1 worker: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
