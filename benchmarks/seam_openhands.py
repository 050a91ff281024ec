"""The OpenHands seam's cost: one ``echo hi`` through the OpenHands terminal tool's executor
(``EpisodeTerminalExecutor``, what the SDK calls for each ``terminal`` action) against the episode's own
``Executor.run``, in one run on one episode (goal: <= 1.2x). Also printed: the same call through the
tool itself (``SweworldTerminalTool.__call__``: the SDK's observation coercion on top).

Run with the Python 3.12 environment (openhands-sdk needs it; bubblewrap and a built environment of
the instance, which the first run builds from PyPI)::

    .venv-py312/bin/python benchmarks/seam_openhands.py [--calls 200] [--instance ID] [--dataset lite]

The loops alternate in rounds of 20 on the same episode, so drift (page cache, CPU frequency) falls
on all of them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from openhands.tools.terminal.definition import TerminalAction

from sweworld.integrations.episodes import EpisodeSpec, backend_for, task_of
from sweworld.integrations.openhands import SweworldTerminalTool, release, sweworld_tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="calls through each path (default 200)")
    parser.add_argument("--instance", default="boltons-24.0.0__change_arith_op__a5f686dc")
    parser.add_argument("--dataset", default="lite")
    parser.add_argument("--backend", default="real", choices=["real", "sim", "hybrid"])
    args = parser.parse_args()
    spec = EpisodeSpec(instance_id=args.instance, dataset=args.dataset, backend=args.backend)
    task = task_of(spec, where="seam_openhands")
    with backend_for(spec).open(task) as executor:
        key = sweworld_tools(executor)[0].params["episode"]
        tool = SweworldTerminalTool.create(None, episode=key)[0]
        try:
            measure(executor, tool, args.calls)
        finally:
            release(key)


def measure(executor, tool: SweworldTerminalTool, calls: int) -> None:
    action = TerminalAction(command="echo hi")
    seam = tool.executor
    assert seam is not None

    def direct() -> None:
        result = executor.run("echo hi")
        assert result.output == "hi\n", result

    def through_executor() -> None:
        out = seam(action)
        assert out.text == "hi" and out.exit_code == 0, out

    def through_tool() -> None:
        out = tool(action)
        assert out.text == "hi" and out.exit_code == 0, out

    paths: dict[str, tuple[Callable[[], None], list[float]]] = {
        "Executor.run('echo hi')": (direct, []), "EpisodeTerminalExecutor(TerminalAction)": (through_executor, []),
        "SweworldTerminalTool(TerminalAction)": (through_tool, [])}
    for fn, _ in paths.values():  # warm every path
        for _ in range(5):
            fn()
    rounds, size = max(1, calls // 20), min(20, calls)
    for _ in range(rounds):
        for fn, times in paths.values():
            for _ in range(size):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
    medians = {name: statistics.median(times) * 1e3 for name, (_, times) in paths.items()}
    base = medians["Executor.run('echo hi')"]
    for name, ms in medians.items():
        print(f"{name + ':':42s} median {ms:.3f} ms over {len(paths[name][1])} calls")
    print(f"ratio executor / run: {medians['EpisodeTerminalExecutor(TerminalAction)'] / base:.2f}x (goal <= 1.2x)")
    print(f"ratio tool / run:     {medians['SweworldTerminalTool(TerminalAction)'] / base:.2f}x")


if __name__ == "__main__":
    main()
