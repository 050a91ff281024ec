"""The trace store (crash-safe, concurrent appends) and the tracing executor (contexts built before
each command runs, the router's decision, real outputs), on real commands in a real git tree."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from world_traces import COMMANDS_AFTER, COMMANDS_BEFORE, make_task, record_episode

from sweworld.core.executor import Executor
from sweworld.testing import check_executor
from sweworld.world.context import SWRContext, SWTContext
from sweworld.world.traces import EvalTrace, StepTrace, TraceStore, load_traces
from sweworld.world.tracing import TracingExecutor

CTX = SWTContext(task={"instance_id": "i", "repo": "o/r", "base_commit": "c"}, workdir="/testbed", command="true")


def step(i: int, output: str = "") -> StepTrace:
    return StepTrace(instance_id=f"i{i}", repo="o/r", command=f"echo {i}", routed="real", context=CTX,
                     output=output or f"{i}\n", step=i)


def test_a_torn_last_line_is_ignored_then_cut_off_by_the_next_append(tmp_path):
    store = TraceStore(tmp_path / "traces.jsonl")
    store.append(step(0))
    store.append(step(1))
    whole = step(2).model_dump_json()
    with open(store.path, "a", encoding="utf-8") as handle:
        handle.write(whole[: len(whole) // 2])  # killed mid-write
    assert [t.step for t in store.load()] == [0, 1] and store.invalid == []
    store.append(step(3))
    assert [t.step for t in store.load()] == [0, 1, 3]
    lines = store.path.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["kind"] == "step" for line in lines)


def test_a_torn_line_without_any_newline_and_a_bad_middle_line(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text('{"kind": "st')
    store = TraceStore(path)
    assert store.load() == []
    store.append(step(0))
    assert path.read_text().count("\n") == 1 and store.load()[0].step == 0
    with open(path, "a") as handle:
        handle.write('{"kind": "step", "no": "fields"}\nnot json\n')
    store.append(step(1))
    assert [t.step for t in store.load()] == [0, 1]
    assert [line.split(": ")[0] for line in store.invalid] == [f"{path}:2", f"{path}:3"]


def test_concurrent_appends_from_threads_and_processes_stay_whole(tmp_path):
    store = TraceStore(tmp_path / "traces.jsonl")
    big = "x" * 200_000  # far over one pipe/page write
    script = ("import sys; sys.path[:0] = sys.argv[2:]\nfrom test_world_traces import step\n"
              "from sweworld.world.traces import TraceStore\n"
              "s = TraceStore(sys.argv[1])\nfor i in range(1000, 1020): s.append(step(i, 'y' * 150000))\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(store.path), str(Path(__file__).parent), *sys.path])
             for _ in range(2)]
    threads = [threading.Thread(target=lambda k=k: [store.append(step(100 * k + i, big)) for i in range(20)])
               for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [p.wait() for p in procs] == [0, 0]
    loaded = store.load()
    assert store.invalid == [] and len(loaded) == 8 * 20 + 2 * 20
    assert sorted(t.step for t in loaded if t.step < 1000) == sorted(100 * k + i for k in range(8) for i in range(20))
    assert all(t.output in (big, "y" * 150000) for t in loaded)


def test_tracing_records_the_context_before_each_command_and_the_real_result(tmp_path):
    store = TraceStore(tmp_path / "run" / "traces.jsonl")
    _, task = record_episode(tmp_path / "tree", store)
    steps = store.steps()
    assert [s.command for s in steps] == COMMANDS_BEFORE + COMMANDS_AFTER
    assert [s.routed for s in steps] == ["sim", "real", "real", "sim", "sim"]
    assert [s.step for s in steps] == list(range(5)) and len({s.episode for s in steps}) == 1
    assert [(s.output, s.exit_code) for s in steps[:2]] == [("-1\n", 0), ("def add(a, b):\n    return a - b\n", 0)]
    assert steps[3].output == "3\n" and "1 passed" in steps[4].output
    before, after = steps[0].context, steps[3].context
    assert isinstance(before, SWTContext) and before.diff == "" and before.history == []
    assert [f.path for f in before.files] == ["reproduce.py"] and "print(add(1, 2))" in before.files[0].content
    assert "+    return a + b" in after.diff  # the edit made before this command
    assert [h.command for h in after.history] == COMMANDS_BEFORE and after.history[0].output == "-1\n"
    assert (after.task.instance_id, after.privileged, after.gold_patch) == (task.instance_id, False, "")
    (evaluation,) = store.evals()
    assert isinstance(evaluation, EvalTrace) and isinstance(evaluation.context, SWRContext)
    assert (evaluation.resolved, evaluation.patch_applies, evaluation.instance_id) == (True, True, task.instance_id)
    assert evaluation.report["tests_status"]["FAIL_TO_PASS"]["success"] == ["tests/test_add.py::test_add"]
    assert evaluation.context.patch == evaluation.patch and "+    return a + b" in evaluation.patch
    assert [f.path for f in evaluation.context.test_files] == ["tests/test_add.py"]
    assert "def test_add" in evaluation.context.test_files[0].content  # after the test patch
    assert "PASSED tests/test_add.py::test_add" in evaluation.test_output
    assert [type(t) for t in load_traces(store.path.parent)] == [StepTrace] * 5 + [EvalTrace]


def test_a_tracing_executor_is_a_conforming_executor_that_records_every_command(tmp_path):
    executor, task = make_task(tmp_path / "tree", "local/calc")
    store = TraceStore(tmp_path / "traces.jsonl")
    traced = TracingExecutor(executor, task, store)
    assert isinstance(traced, Executor)
    check_executor(traced, workdir_file="reproduce.py")
    assert [s.command for s in store.steps()] == executor.commands and len(executor.commands) >= 5
