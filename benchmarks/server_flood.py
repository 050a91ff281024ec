"""``sweworld runtime serve`` under a flood (issue 50): one client's flood must leave ``/is_alive`` and
every other episode answering; goal: p99 of another client's ``/is_alive`` under 100 ms.

    python benchmarks/server_flood.py [--clients 50] [--seconds 30] [--command "sleep 1"] [--backoff 0.05]
                                      [--server process|thread] [--backend real|sim] [-- SERVE FLAGS...]

A real server on 127.0.0.1 (``sweworld runtime serve`` in its own process, as SWE-agent meets it;
``--server thread``: on a thread of this process) serves two episodes of the tests' real more-itertools
instance (``tests/realtasks.py``; the second is the same task under another id). Both are opened
first. Then, for ``--quiet`` seconds with no flood and ``--seconds`` seconds under it, two probes run
one request at a time, each on a fresh connection as swe-rex's ``RemoteRuntime`` makes them: another
client's ``GET /<flooded>/is_alive`` and the other episode's ``run_in_session`` of ``echo hi``. The
flood (in a process of its own, so that its clients' work does not delay the probes' clocks):
``--clients`` clients, each in a loop on the flooded episode: ``create_session`` (a new session),
then ``run_in_session`` of ``--command``; a refusal (429, 503) is retried after ``--backoff`` seconds,
its ``Retry-After`` ignored (a hostile client). Every request has a client timeout (``--timeout``: an
unanswered one counts at that value), so the script stops by itself. Printed: p50/p99/max of both
probes, quiet and flooded, their ratios, and the flood's replies by status.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

OTHER = "-other"


def _dataset(tmp: Path) -> tuple[str, str, str]:
    from realtasks import real_tasks
    from sweworld.tasks import save_tasks
    task = real_tasks()["first"]
    other = task.model_copy(update={"instance_id": task.instance_id + OTHER})
    return str(save_tasks([task, other], tmp / "flood.jsonl")), task.instance_id, other.instance_id


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(args: argparse.Namespace, dataset: str, key: str):
    """(url, stop): the server, in a process (the CLI) or on a thread."""
    if args.server == "thread":
        from sweworld.integrations.episodes import EpisodeSpec
        from sweworld.integrations.swerex import RexServer, ServerThread, create_app
        thread = ServerThread(create_app(RexServer(EpisodeSpec(dataset=dataset, backend=args.backend)), key))
        thread.__enter__()
        return thread.url, lambda: thread.__exit__(None, None, None)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sweworld.cli.app", "runtime", "serve", "--port", str(port),
                             "--dataset", dataset, "--backend", args.backend, *args.serve],
                            env={**os.environ, "SWEWORLD_API_KEY": key}, stdout=subprocess.DEVNULL)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a server whose threads are all stuck does not stop on SIGTERM
            proc.kill()
            proc.wait()
    return f"http://127.0.0.1:{port}", stop


class Client:
    """Requests on fresh connections (``force_close``, as ``RemoteRuntime``), each bounded by ``timeout``."""

    def __init__(self, url: str, key: str, timeout: float):
        self.url, self.headers, self.timeout = url, {"X-API-Key": key}, timeout
        self.http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True, limit=0),
                                          timeout=aiohttp.ClientTimeout(total=timeout))

    async def call(self, path: str, body: dict | None = None) -> tuple[int, float, dict]:
        """(status, seconds, JSON body); status 0: no answer within the timeout."""
        start = time.perf_counter()
        method = self.http.get if body is None else self.http.post
        try:
            async with method(f"{self.url}/{path}", json=body, headers=self.headers) as response:
                data = await response.json(content_type=None)
                return response.status, time.perf_counter() - start, data
        except (asyncio.TimeoutError, aiohttp.ClientError):
            return 0, self.timeout, {}


def _action(command: str, session: str) -> dict:
    return {"command": command, "session": session, "action_type": "bash", "check": "silent"}


async def _probe(client: Client, path: str, body: dict | None, until: float, pause: float,
                 ok=lambda data: True) -> tuple[list[float], int]:
    """Latencies of one request at a time until ``until``; and how many failed (no answer, not 200, wrong)."""
    times, failed = [], 0
    while time.monotonic() < until:
        status, took, data = await client.call(path, body)
        times.append(took)
        failed += status != 200 or not ok(data)
        await asyncio.sleep(pause)
    return times, failed


async def _flooder(client: Client, episode: str, n: int, args: argparse.Namespace, until: float,
                   seen: Counter) -> None:
    k = 0
    while time.monotonic() < until:
        session = f"flood-{n}-{k}"
        k += 1
        for path, body in (("create_session", {"session": session, "session_type": "bash"}),
                           ("run_in_session", _action(args.command, session))):
            while time.monotonic() < until:
                status, _, _ = await client.call(f"{episode}/{path}", body)
                seen[status] += 1
                if status not in (429, 503):
                    break
                await asyncio.sleep(args.backoff)


def _pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


def _line(name: str, times: list[float], failed: int) -> str:
    return (f"  {name:34} n {len(times):5}  p50 {_pct(times, .5):8.1f} ms  p99 {_pct(times, .99):8.1f} ms  "
            f"max {_pct(times, 1):8.1f} ms  failed {failed}")


async def _flood(url: str, key: str, episode: str, args: argparse.Namespace, seconds: float) -> Counter:
    client, seen = Client(url, key, args.timeout), Counter()
    until = time.monotonic() + seconds
    try:
        await asyncio.gather(*(_flooder(client, episode, n, args, until, seen) for n in range(args.clients)))
    finally:
        await client.http.close()
    return seen


def _flood_process(url: str, key: str, episode: str, args: argparse.Namespace, seconds: float, out) -> None:
    """The flood in a process of its own: its clients' work does not delay the probes' measurements."""
    out.send(asyncio.run(_flood(url, key, episode, args, seconds)))


async def _phase(client: Client, flooded: str, other: str, args: argparse.Namespace, seconds: float,
                 flood: bool) -> tuple[dict, Counter]:
    import multiprocessing
    seen: Counter = Counter()
    if flood:
        receive, send = multiprocessing.Pipe(duplex=False)
        flooder = multiprocessing.get_context("spawn").Process(
            target=_flood_process, args=(client.url, client.headers["X-API-Key"], flooded, args, seconds, send))
        flooder.start()
    until = time.monotonic() + seconds
    alive, command = await asyncio.gather(
        _probe(client, f"{flooded}/is_alive", None, until, args.pause, lambda d: d.get("is_alive") is True),
        _probe(client, f"{other}/run_in_session", _action("echo hi", "probe"), until, args.pause,
               lambda d: d.get("output") == "hi\n"))
    if flood:
        seen = await asyncio.to_thread(receive.recv)
        flooder.join()
    return {"alive": alive, "command": command}, seen


async def _main(args: argparse.Namespace) -> None:
    key = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as tmp:
        dataset, flooded, other = _dataset(Path(tmp))
        url, stop = _start(args, dataset, key)
        client = Client(url, key, args.timeout)
        try:
            for episode in (flooded, other):  # open both (the first open may build the environment)
                deadline = time.monotonic() + 1800
                while (await client.call(f"{episode}/is_alive"))[2].get("is_alive") is not True:
                    assert time.monotonic() < deadline, f"{episode} did not open"
                    await asyncio.sleep(0.5)
            status, _, data = await client.call(f"{other}/create_session", {"session": "probe", "session_type": "bash"})
            assert status == 200, data
            quiet, _ = await _phase(client, flooded, other, args, args.quiet, False)
            loud, seen = await _phase(client, flooded, other, args, args.seconds, True)
        finally:
            await client.http.close()
            stop()
    print(f"server in a {args.server}, {args.backend} backend; flood: {args.clients} clients on one episode, "
          f"{args.seconds:g} s, create_session + run_in_session {args.command!r}, retried after {args.backoff:g} s")
    replies = ", ".join(f"{status or 'no answer'}: {n}" for status, n in sorted(seen.items()))
    print(f"  flood's replies: {sum(seen.values())} ({replies})")
    for name, label in (("alive", "/is_alive of the flooded episode"), ("command", "other episode's `echo hi`")):
        print(_line(f"{label}, quiet", *quiet[name]))
        print(_line(f"{label}, flooded", *loud[name]))
        ratio = _pct(loud[name][0], .99) / _pct(quiet[name][0], .99)
        print(f"  {'':34} p99 flooded / quiet: {ratio:.2f}x" + ("   (goal: p99 under 100 ms)" if name == "alive" else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the flood lasts")
    parser.add_argument("--quiet", type=float, default=5.0, help="how long the probes run first, without a flood")
    parser.add_argument("--command", default="sleep 1", help="what each flooding client runs")
    parser.add_argument("--backoff", type=float, default=0.05, help="a flooding client's pause after a refusal")
    parser.add_argument("--pause", type=float, default=0.02, help="a probe's pause between its requests")
    parser.add_argument("--timeout", type=float, default=30.0, help="client timeout of every request, seconds")
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    parser.add_argument("--backend", choices=("real", "sim"), default="real")
    parser.add_argument("serve", nargs="*", help="further `sweworld runtime serve` flags (after --)")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
