"""The inspect-ai seam's cost and scale, in one run.

1. One ``echo hi`` through ``SweworldSandboxEnvironment.exec`` (inspect's own call, awaited on its
   event loop, the episode's work on a thread) against the episode's own ``Executor.run``: the
   medians and their ratio (goal: <= 1.2x), direct and seam alternating in blocks of 10.
2. ``--samples N`` concurrent inspect samples (default 64) through ``inspect_ai.eval``: one sample
   per instance of ``--dataset``, each in its own sweworld sandbox, a solver calling inspect's own
   ``bash()`` and ``text_editor()`` tools, scored by ``sweworld_scorer``; samples, errors, wall time.

    python benchmarks/seam_inspect.py [--calls 300] [--samples 64] [--dataset default] [--backend real]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import bash, text_editor

from sweworld.integrations.episodes import EpisodeSpec
from sweworld.integrations.inspect_sandbox import SweworldSandboxEnvironment
from sweworld.integrations.inspect_task import samples, sweworld_scorer

ECHO = "echo hi"


async def _echo(args: argparse.Namespace) -> dict[str, float]:
    metadata = {"instance_id": args.instance, "dataset": args.echo_dataset, "backend": args.backend}
    envs = await SweworldSandboxEnvironment.sample_init("seam", None, metadata)
    env = envs["default"]
    times: dict[str, list[float]] = {"direct": [], "seam": []}
    try:
        for n in range(args.warmup + 2 * args.calls):
            kind = "direct" if (n // 10) % 2 == 0 else "seam"
            start = time.perf_counter()
            if kind == "direct":
                await asyncio.to_thread(env.executor.run, ECHO)  # the same thread hop the seam pays
            else:
                result = await env.exec(["echo", "hi"])
                assert result.stdout == "hi\n", result
            if n >= args.warmup:
                times[kind].append(time.perf_counter() - start)
        # the episode's own call without any event loop around it: what sweworld's own agent pays
        for _ in range(args.calls):
            start = time.perf_counter()
            env.executor.run(ECHO)
            times.setdefault("direct, no event loop", []).append(time.perf_counter() - start)
    finally:
        await SweworldSandboxEnvironment.sample_cleanup("seam", None, envs, False)
    return {kind: statistics.median(values) * 1000 for kind, values in times.items()}


@solver
def _tools_probe():
    """A model-free solver using inspect's own tools in the sample's sandbox."""
    shell, editor = bash(timeout=120), text_editor()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        out = await shell("cd /testbed && echo ready && python -c 'print(6 * 7)' && git status --short | wc -l")
        assert "ready" in str(out) and "42" in str(out), out
        view = await editor(command="view", path="/testbed")
        assert "/testbed" in str(view), view
        return state

    return solve


def _concurrent(args: argparse.Namespace) -> dict[str, float | int]:
    spec = EpisodeSpec(dataset=args.dataset, backend=args.backend)
    rows = samples(spec)[: args.samples]
    task = Task(dataset=MemoryDataset(rows), solver=_tools_probe(), scorer=sweworld_scorer())
    start = time.perf_counter()
    [log] = inspect_eval(task, model="mockllm/model", display="none", max_samples=args.samples,
                         max_sandboxes=args.samples, log_dir=tempfile.mkdtemp(prefix="seam-inspect-"))
    wall = time.perf_counter() - start
    errors = [s for s in log.samples or [] if s.error is not None]
    scored = [s for s in log.samples or [] if s.scores]
    return {"samples": len(log.samples or []), "errors": len(errors), "scored": len(scored),
            "status_ok": int(log.status == "success"), "wall_s": wall,
            "first_error": str(errors[0].error.message)[:300] if errors else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--dataset", default="default", help="dataset of the concurrent samples")
    parser.add_argument("--echo-dataset", default="lite")
    parser.add_argument("--instance", default="boltons-24.0.0__change_arith_op__a5f686dc")
    parser.add_argument("--backend", default="real", choices=["real", "sim", "hybrid"])
    args = parser.parse_args()
    medians = asyncio.run(_echo(args))
    print(f"inspect exec(['echo','hi']) vs Executor.run('{ECHO}'), median of {args.calls} ({args.backend}):")
    for kind, ms in medians.items():
        print(f"  {kind:<24} {ms:7.3f} ms")
    print(f"  ratio seam/direct        {medians['seam'] / medians['direct']:7.3f}x  (goal <= 1.2x)")
    print(f"  ratio seam/direct (no loop) {medians['seam'] / medians['direct, no event loop']:7.3f}x")
    if args.samples:
        result = _concurrent(args)
        print(f"{args.samples} concurrent inspect samples ({args.dataset}, {args.backend}): {result}")


if __name__ == "__main__":
    main()
