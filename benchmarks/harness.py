"""P5: harness wall time per instance vs the same test command run bare in the same workspace.

    python benchmarks/harness.py [--repeat 3]

For every real bug instance of the embedded dataset (gold predictions): the harness time is one
``evaluate_instance`` (episode, patch chain, eval script with test patch and markers, parsing,
grading, logs); the bare time is the test command on the same directives, run directly in an
episode of the same workspace with the gold patch applied. Environments are built beforehand.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import tempfile
import time
from pathlib import Path

from sweworld.backends.real import evaluate_instance
from sweworld.datasets import path_of
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.harness.directives import test_directives
from sweworld.harness.predictions import Prediction
from sweworld.tasks import load_tasks


def measure(builder: EnvBuilder, task, repeat: int) -> tuple[float, float]:
    """Median seconds of one gold evaluation of ``task`` and of its test command run bare."""
    layer = builder.instance(task)
    command = f"{layer.env.recipe.test_cmd} {' '.join(shlex.quote(d) for d in test_directives(task))}"
    harness, bare = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            report = evaluate_instance(task, Prediction(instance_id=task.instance_id, model_patch=task.patch),
                                       Path(tmp) / task.instance_id, builder=builder, timeout=900)
            harness.append(time.perf_counter() - started)
            assert report.resolved, report
        with episode_sandbox(layer) as sb:
            sb.write_file("/tmp/gold.diff", task.patch)
            sb.run("git apply /tmp/gold.diff")
            if task.test_patch:
                sb.write_file("/tmp/test.diff", task.test_patch)
                sb.run("git apply /tmp/test.diff")
            started = time.perf_counter()
            sb.exec(command, timeout=900)
            bare.append(time.perf_counter() - started)
    return statistics.median(harness), statistics.median(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tasks = [t for t in load_tasks(path_of("demo")) if t.FAIL_TO_PASS]
    builder = EnvBuilder()
    total_harness = total_bare = 0.0
    print("P5 harness overhead per instance (gold predictions, medians)")
    for task in tasks:
        h, b = measure(builder, task, args.repeat)
        total_harness, total_bare = total_harness + h, total_bare + b
        print(f"   {task.instance_id:34s} harness {h:6.2f} s   bare {b:6.2f} s   overhead {100 * (h / b - 1):5.1f} %")
    print(f"   all instances                      harness {total_harness:6.2f} s   bare {total_bare:6.2f} s   "
          f"overhead {100 * (total_harness / total_bare - 1):5.1f} %")


if __name__ == "__main__":
    main()
