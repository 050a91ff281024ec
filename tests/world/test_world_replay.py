"""The replay server over real HTTP: recorded contexts come back exactly through SWT and SWR in both
prompt styles, a sim episode in the recorded state gets the real outputs, misses fall back as the
module says and are counted."""

from __future__ import annotations

import httpx
import pytest
from world_tasks import world_model
from world_traces import COMMANDS_AFTER, COMMANDS_BEFORE, WRONG, record_episode

from sweworld.core.types import Task
from sweworld.world.replay import NO_OUTPUT, ReplayServer, message_key
from sweworld.world.simexec import SimExecutor
from sweworld.world.swr import SWR, SWRConfig
from sweworld.world.swt import SWT, SWTConfig
from sweworld.world.templates import render
from sweworld.world.traces import TraceStore

STYLES = ["sweworld", "swe-world"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> TraceStore:
    """Two real episodes of local/calc: the right fix (resolved) and a wrong one (unresolved)."""
    root = tmp_path_factory.mktemp("replay")
    store = TraceStore(root / "traces.jsonl")
    record_episode(root / "good", store)
    record_episode(root / "wrong", store, fix=WRONG)
    return store


def models(url: str, style: str) -> tuple[SWT, SWR]:
    return (SWT(world_model(url), SWTConfig(style=style)),
            SWR(world_model(url, temperature=0.7), SWRConfig(style=style, trust_reward_when_unparsed=True)))


@pytest.mark.parametrize("style", STYLES)
def test_exact_hits_reproduce_the_recorded_outputs_and_verdicts(store, style):
    server = ReplayServer(store.path)
    with server as url:
        swt, swr = models(url, style)
        for trace in store.steps():
            predicted = swt.predict_messages(swt.messages(trace.context))
            assert (predicted.output, predicted.exit_code, predicted.sim_failure) == (trace.output, trace.exit_code, False)
        for trace in store.evals():
            task = Task.model_validate(trace.task)
            report = swr.evaluate_messages(task, trace.patch, swr.messages(trace.context), 2)
            assert (report.resolved, report.sim_probability, report.sim_graded_from) == (
                trace.resolved, float(trace.resolved), ["report", "report"])
            assert (report.tests_status, report.test_exit_code) == (trace.report["tests_status"],
                                                                    trace.report["test_exit_code"])
    assert sorted(e.resolved for e in store.evals()) == [False, True]
    assert server.stats["swt"] == {"hit": 10, "fallback": 0, "miss": 0}
    assert server.stats["swr"] == {"hit": 4, "fallback": 0, "miss": 0}
    assert (server.stats["hits"], server.stats["misses"]) == (14, 0)


@pytest.mark.parametrize("style", STYLES)
def test_a_sim_episode_in_the_recorded_state_gets_the_real_outputs(tmp_path, style):
    store = TraceStore(tmp_path / "traces.jsonl")
    executor, task = record_episode(tmp_path / "tree", store)
    executor.run("git reset -q --hard && git clean -qfdx")  # the same tree, at the base commit again
    real = store.steps()
    server = ReplayServer(store.path)
    with server as url:
        sim = SimExecutor(executor, task, models(url, style)[0])
        outputs = [sim.run(c) for c in COMMANDS_BEFORE]
        sim.write_file("pkg/__init__.py", "def add(a, b):\n    return a + b\n")
        outputs += [sim.run(c) for c in COMMANDS_AFTER]
    assert [(r.output, r.exit_code) for r in outputs] == [(real[i].output, real[i].exit_code) for i in range(5)]
    assert [r.simulated for r in outputs] == [True, False, False, True, True]
    # the pytest step is `... | tail -1`: SWT is asked for its simulated part alone (a fallback by command)
    assert server.stats["swt"] == {"hit": 2, "fallback": 1, "miss": 0}


@pytest.mark.parametrize("style", STYLES)
def test_misses_fall_back_to_the_same_command_or_patch_else_say_so(store, style):
    steps, (good, wrong) = store.steps(), store.evals()
    latest = [s for s in steps if s.command == steps[0].command][-1]  # the most recent run of that command
    assert latest.output != steps[0].output
    server = ReplayServer(store.path)
    with server as url:
        swt, swr = models(url, style)
        other = latest.context.model_copy(update={"diff": "diff --git a/x b/x\n", "history": []})
        same_command = swt.predict_messages(swt.messages(other))
        unknown = swt.predict_messages(swt.messages(other.model_copy(update={"command": "python nowhere.py"})))
        task = Task.model_validate(good.task)
        changed = good.context.model_copy(update={"test_command": "pytest -rA tests"})  # same patch, new context
        by_patch = swr.evaluate_messages(task, good.patch, swr.messages(changed), 1)
        novel = wrong.context.model_copy(update={"patch": "diff --git a/pkg/x.py b/pkg/x.py\n"})
        unseen = swr.evaluate_messages(task, novel.patch, swr.messages(novel), 1)
    assert (same_command.output, same_command.exit_code) == (latest.output, latest.exit_code)
    assert (unknown.output, unknown.exit_code) == (NO_OUTPUT, 1)
    assert by_patch.resolved is True and by_patch.tests_status == good.report["tests_status"]
    # the message shows the resolved episode's patch as the reference fix: that is not the agent's patch
    assert novel.gold_patch == good.patch and good.resolved
    assert (unseen.resolved, unseen.sim_stated_rewards) == (False, [0])
    assert server.stats["swt"] == {"hit": 0, "fallback": 1, "miss": 1}
    assert server.stats["swr"] == {"hit": 0, "fallback": 1, "miss": 1}


def test_models_stats_and_bad_requests(store):
    server = ReplayServer(store.path, model="replayed")
    with server as url:
        models_list = httpx.get(f"{url}/models").json()
        bad = httpx.post(f"{url}/chat/completions", content=b"{not json")
        empty = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": [], "n": 3}).json()
        stats = httpx.get(url.removesuffix("/v1") + "/stats").json()
    keys = {message_key(render(style, "swt" if t.kind == "step" else "swr", t.context))
            for t in store.load() for style in STYLES}
    assert [m["id"] for m in models_list["data"]] == ["replayed"] and bad.status_code == 400
    assert len(empty["choices"]) == 3 and NO_OUTPUT in empty["choices"][0]["message"]["content"]
    assert (stats["misses"], stats["swt"]["miss"], stats["contexts"]) == (1, 1, len(keys))
