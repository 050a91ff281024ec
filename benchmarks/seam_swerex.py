"""The SWE-ReX seam's cost: one ``echo hi`` through swe-rex's ``RemoteRuntime`` (HTTP to
``sweworld runtime serve``, ``run_in_session`` on a warm session) against the episode's own
``Executor.run``, in one run; goal: the seam <= 2 ms over direct.

    python benchmarks/seam_swerex.py [--calls 200] [--server process|thread] [--backend real|sim]
                                     [--dataset lite --instance ID]

By default the instance is the real more-itertools task of the tests (``tests/realtasks.py``, from
PyPI, cached under ``$SWEWORLD_HOME``), written to a temporary dataset. ``--server process`` (the
default) runs the server as SWE-agent meets it, ``sweworld runtime serve`` in its own process;
``thread`` runs it on a thread of this process (client and server then share one GIL). Each figure
is the median of ``--calls`` calls after ``--warmup`` unmeasured ones, direct and seam alternating
in blocks of 10. A second pair times a command that ``bash -n`` must check (``echo "$HOME" | cat``:
not plain words), which the seam checks inside the episode first, as swerex's runtime does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from swerex.runtime.abstract import BashAction, CreateBashSessionRequest
from swerex.runtime.remote import RemoteRuntime

from sweworld.integrations.episodes import EpisodeSpec, backend_for, task_of

PLAIN, CHECKED = "echo hi", 'echo "$HOME" | cat'


def _dataset(args: argparse.Namespace, tmp: Path) -> tuple[str, str]:
    if args.instance:
        return args.dataset, args.instance
    from realtasks import real_tasks
    from sweworld.tasks import save_tasks
    task = real_tasks()["first"]
    return str(save_tasks([task], tmp / "seam.jsonl")), task.instance_id


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(args: argparse.Namespace, dataset: str, instance: str, key: str):
    """(url, stop): the server, in a process (the CLI) or on a thread."""
    if args.server == "thread":
        from sweworld.integrations.swerex import RexServer, ServerThread, create_app
        server = RexServer(EpisodeSpec(dataset=dataset, backend=args.backend), instance_ids=[instance])
        thread = ServerThread(create_app(server, key)).__enter__()
        return thread.url, lambda: thread.__exit__(None, None, None)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sweworld.cli.app", "runtime", "serve", "--port", str(port),
                             "--dataset", dataset, "--instance-ids", instance, "--backend", args.backend],
                            env={**os.environ, "SWEWORLD_API_KEY": key}, stdout=subprocess.DEVNULL)
    return f"http://127.0.0.1:{port}", lambda: (proc.terminate(), proc.wait())


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def _measure(args: argparse.Namespace, runtime: RemoteRuntime, executor) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {f"{kind} {cmd}": [] for cmd in (PLAIN, CHECKED) for kind in ("direct", "seam")}
    for command in (PLAIN, CHECKED):
        for n in range(args.warmup + 2 * args.calls):
            kind = "direct" if (n // 10) % 2 == 0 else "seam"
            start = time.perf_counter()
            if kind == "direct":
                result = executor.run(command)
                assert result.exit_code == 0, result
            else:
                observation = await runtime.run_in_session(BashAction(command=command, check="raise"))
                assert observation.exit_code == 0, observation
            if n >= args.warmup:
                times[f"{kind} {command}"].append(time.perf_counter() - start)
    return times


async def _main(args: argparse.Namespace) -> None:
    key = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as tmp:
        dataset, instance = _dataset(args, Path(tmp))
        spec = EpisodeSpec(instance_id=instance, dataset=dataset, backend=args.backend)
        url, stop = _start(args, dataset, instance, key)
        executor = backend_for(spec).open(task_of(spec, where="benchmark"))
        try:
            runtime = RemoteRuntime(host=url, auth_token=key, timeout=5)
            await runtime.wait_until_alive(timeout=1800)
            await runtime.create_session(CreateBashSessionRequest())
            assert executor.run(PLAIN).output == (await runtime.run_in_session(BashAction(command=PLAIN))).output
            times = await _measure(args, runtime, executor)
        finally:
            executor.close()
            stop()
    print(f"instance {instance}, backend {args.backend}, server in a {args.server}, {args.calls} calls each")
    for command in (PLAIN, CHECKED):
        direct, seam = _median_ms(times[f"direct {command}"]), _median_ms(times[f"seam {command}"])
        print(f"{command!r:24} direct {direct:6.3f} ms   seam {seam:6.3f} ms   difference {seam - direct:6.3f} ms   "
              f"ratio {seam / direct:5.2f}x" + ("   (goal: difference <= 2 ms)" if command == PLAIN else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    parser.add_argument("--backend", choices=("real", "sim", "hybrid"), default="real")
    parser.add_argument("--dataset", default="lite")
    parser.add_argument("--instance", default="", help="an instance of --dataset (default: the tests' more-itertools)")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
