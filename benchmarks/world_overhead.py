"""SWT/SWR call overhead (context + prompt build + parse + grading), model time excluded; goal <= 5 ms.

    python benchmarks/world_overhead.py [--calls 200]

A local scripted OpenAI-compatible server (tests/chatserver.py) answers every request at once. For
each kind, in one run: the time of a whole call (``SWT.predict`` / ``SWR.evaluate``, cache off)
outside ``WorldModel.complete`` (whose time is the model's: HTTP, JSON), per call; and, as a check,
the median whole call minus the median raw round trip of the same request through the HTTP client
alone (``OpenAIChatModel.complete``), which the local server's latency jitter makes noisier. The
executor is an in-memory one, so its I/O (file reads, ``git diff``: a sandbox call each in a real
episode) is not counted.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from chatserver import ChatServer
from sweworld.core.types import ExecResult, Task
from sweworld.models.base import ModelConfig
from sweworld.models.openai import OpenAIChatModel
from sweworld.world.context import swr_context
from sweworld.world.swr import SWR
from sweworld.world.swt import SWT
from sweworld.world.worldmodels import OpenAIWorldConfig, OpenAIWorldModel

SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(150))  # ~5 KB
DIFF = "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n" + \
    "".join(f"-    return x - {i}\n+    return x + {i}\n" for i in range(40))
TESTS = [f"tests/test_mod.py::test_f{i}" for i in range(60)]
REPORT = "".join(f"PASSED {t}\n" for t in TESTS) + "============ 60 passed in 0.31s ============\n"
SWT_REPLY = '{"stdout": "' + "line of output\\n" * 40 + '", "stderr": "", "exit_code": 0}'
SWR_REPLY = "<think>" + "The patch fixes f3 and keeps the others. " * 30 + "</think>\n" + \
    '{"test_report": ' + repr(REPORT).replace("'", '"') + ', "reward": 1}'


class MemoryExecutor:
    """Files in a dict; every command prints nothing (so SWR reads files as they are)."""

    workdir = "/testbed"

    def __init__(self, files: dict[str, str]):
        self.files = files

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None) -> ExecResult:
        return ExecResult(output="", exit_code=0)

    def read_file(self, path: str) -> str:
        return self.files[path.removeprefix(self.workdir + "/")]

    def write_file(self, path: str, content: str) -> None:
        self.files[path] = content

    def diff(self) -> str:
        return DIFF

    def close(self) -> None:
        pass


class TimedModel:
    """A ``WorldModel`` proxy that adds up the time spent inside the model (HTTP included)."""

    def __init__(self, inner: OpenAIWorldModel):
        self.inner = inner
        self.seconds = 0.0

    def complete(self, messages: list[dict], n: int = 1, *, attempt: int = 0) -> list[str]:
        started = time.perf_counter()
        try:
            return self.inner.complete(messages, n, attempt=attempt)
        finally:
            self.seconds += time.perf_counter() - started


def median_ms(calls: int, fn: Callable[[int], object]) -> float:
    fn(-1)  # warm up
    times = []
    for i in range(calls):
        started = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(kind: str, reply: str, calls: int, task: Task, executor: MemoryExecutor) -> tuple[float, float, float]:
    """(median whole call, median raw HTTP round trip, mean time outside the model per call), in ms."""
    history = [(f"python run.py --n {i}", ExecResult(output="out\n" * 50)) for i in range(5)]
    with ChatServer(default=reply) as server:
        model = TimedModel(OpenAIWorldModel(OpenAIWorldConfig(urls=[server.url], model="m", cache=False)))
        if kind == "SWT":
            swt = SWT(model)
            messages = swt.messages(swt.context(task, "python run.py", executor, history))

            def call(i: int) -> object:
                return swt.predict(task, f"python run.py --n {i}", executor, history)
        else:
            swr = SWR(model)
            messages = swr.messages(swr_context(task, DIFF, executor))

            def call(i: int) -> object:
                return swr.evaluate(task, DIFF, executor)
        call(-1)  # warm up
        model.seconds = 0.0
        started = time.perf_counter()
        for i in range(calls):
            call(i)
        outside = (time.perf_counter() - started - model.seconds) / calls * 1000
        whole = median_ms(calls, call)
        with OpenAIChatModel(ModelConfig(url=server.url, model="m", native_tools=False)) as raw_client:
            raw = median_ms(calls, lambda i: raw_client.complete(messages))
        model.inner.close()
    return whole, raw, outside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per measurement")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    task = Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, problem_statement="f3 is wrong. " * 150,
                patch=DIFF, test_patch=DIFF.replace("pkg/mod.py", "tests/test_mod.py"), FAIL_TO_PASS=TESTS[:3],
                PASS_TO_PASS=TESTS[3:], test_cmd="pytest -rA")
    executor = MemoryExecutor({"pkg/mod.py": SOURCE, "run.py": SOURCE, "tests/test_mod.py": SOURCE})
    print(f"world-model call overhead, median of {args.calls} calls, model time excluded (goal <= 5 ms)")
    for kind, reply in (("SWT", SWT_REPLY), ("SWR", SWR_REPLY)):
        whole, raw, outside = measure(kind, reply, args.calls, task, executor)
        print(f"   {kind}: overhead {outside:5.2f} ms per call (time outside the model: context, render, parse"
              f"{', grade' if kind == 'SWR' else ''}); median call {whole:6.2f} ms - median raw HTTP round trip "
              f"{raw:6.2f} ms = {whole - raw:5.2f} ms")


if __name__ == "__main__":
    main()
