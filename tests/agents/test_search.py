"""Search over live episodes, on real sandboxes: the loop pauses and goes on as if never paused; a
scripted policy resumed from a prefix acts as the live one did; the best-first tree search forks its
nodes, scores them with the shipped embedded SWR verifier (CPU) and returns the best leaf, here a patch
the real harness resolves, found among perturb's wrong edits."""

from __future__ import annotations

from functools import partial

import pytest
from tests.backends.fake import FakeExecutor
from tests.backends.test_backends_seam import FILES, TASK
from tests.runs.test_branching_rollouts import IID

from sweworld.agents import policies
from sweworld.agents.config import load_agent_config
from sweworld.agents.explorer import ExplorerPolicy
from sweworld.agents.loop import AgentRun
from sweworld.agents.perturb import PerturbPolicy
from sweworld.agents.search import best_first, resume_policy
from sweworld.core.errors import ConfigError
from sweworld.seam import grade
from sweworld.synth import mutations_for_file
from sweworld.verify import RandomVerifier, SWRVerifier


def steps_of(traj):
    return [(s.tool, s.arguments, s.observation, s.exit_code) for s in traj.steps]


@pytest.mark.bwrap
@pytest.mark.network
def test_a_paused_run_goes_on_as_if_never_paused(task, backend):
    config = load_agent_config()
    with backend.open(task) as episode:
        whole = AgentRun(task, episode, policies.TestingOraclePolicy(), config).run()
    with backend.open(task) as episode:
        run = AgentRun(task, episode, policies.TestingOraclePolicy(), config)
        paused = run.run(until=2)
        assert run.paused and len(paused.steps) == 2 and paused.patch == ""
        again = run.run()
    assert not run.paused and again.exit_status == whole.exit_status == "submitted"
    assert [s[:2] for s in steps_of(again)] == [s[:2] for s in steps_of(whole)] and again.patch == whole.patch
    assert again.messages[:len(paused.messages)] == paused.messages


@pytest.mark.bwrap
@pytest.mark.network
def test_a_resumed_scripted_policy_acts_as_the_live_one(task, backend):
    config = load_agent_config()
    with backend.open(task) as episode:
        run = AgentRun(task, episode, ExplorerPolicy(fix="perturb", mutate=mutations_for_file).bind(IID, 2), config)
        run.run(until=9)
        prefix = run.traj.model_copy(deep=True)
        live = run.run(until=11)
    fresh = ExplorerPolicy(fix="perturb", mutate=mutations_for_file).bind(IID, 2)
    resume_policy(fresh, task, prefix.messages, len(prefix.steps))
    reply = fresh.act(prefix.messages, None)
    assert (reply.tool_calls[0].name, reply.tool_calls[0].arguments) == (live.steps[9].tool, live.steps[9].arguments)


@pytest.mark.bwrap
@pytest.mark.network
def test_best_first_finds_a_resolving_patch_among_wrong_edits(task, backend, tmp_path):
    make = partial(PerturbPolicy, p=0.3, mutate=mutations_for_file)
    with backend.open(task) as root:
        result = best_first(task, root, make, load_agent_config(), SWRVerifier(), children=3, steps=2, budget=3)
        assert root.diff() == ""  # the root episode is untouched: its children are forks
    nodes = {n.id: n for n in result.nodes}
    assert result.expansions == 3 and len(nodes) == 1 + 3 * 3
    for node in result.nodes[1:]:  # each continues its parent's trajectory
        parent = nodes[node.parent].trajectory
        assert steps_of(node.trajectory)[:len(parent.steps)] == steps_of(parent)
        assert len(node.trajectory.steps) <= len(parent.steps) + 2
    leaves = result.leaves
    assert leaves and result.best_node in {n.id for n in leaves}
    assert nodes[result.best_node].score == max(n.score for n in leaves)
    verdicts = {n.id: grade(backend, task, n.trajectory.patch, model="search", logs=tmp_path, name=f"{IID}.{n.id}",
                            binary=True).reward for n in leaves}
    assert 0.0 in verdicts.values()  # wrong edits were made, and left behind
    assert verdicts[result.best_node] == 1.0 and result.best.exit_status == "submitted"
    assert result.best.patch == nodes[result.best_node].trajectory.patch


def test_a_search_needs_an_episode_that_forks():
    with pytest.raises(ConfigError, match="FakeExecutor has no snapshot/fork/restore"):
        best_first(TASK, FakeExecutor(dict(FILES)), PerturbPolicy, load_agent_config(), RandomVerifier())
