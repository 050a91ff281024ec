"""Branched rollouts (``--branch-at STEP --branches K``) on real episodes: a prefix runs once, is
snapshotted and continued K times in forks; the branches share the prefix (its steps, files, shell cwd
and exports) and nothing of each other's; each is its own sample (explorer-perturb's branches make the
patches and get the harness's verdicts that K full rollouts make); an episode that ends within the
prefix is one trajectory that says so; a rerun completes what is missing and keeps one prefix per
branch set; a backend whose episodes cannot fork is one clear error; the CLI and the sim backend too."""

from __future__ import annotations

from functools import partial

import pytest
from tests.backends.fake import FakeBackend
from tests.backends.test_backends_seam import FILES, TASK
from typer.testing import CliRunner

from sweworld.agents.config import load_agent_config
from sweworld.agents.explorer import ExplorerPolicy
from sweworld.agents.policies import NoopPolicy, ScriptedPolicy
from sweworld.backends.real import RealBackend
from sweworld.cli.app import app
from sweworld.core.config import CONFIG_FILE, RolloutConfig, load
from sweworld.core.errors import ConfigError, SnapshotError
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.sandbox import Sandbox
from sweworld.synth import mutations_for_file
from sweworld.tasks import load_tasks
from sweworld.trajectory import Trajectory

IID = "more-itertools__first-and-ilen"
PREFIX = 7
REPRO = "python reproduce_issue.py"


def explored(traj: Trajectory) -> int:
    """explorer's exploration: layout, find, views, greps, the failing tests, the reproduction script
    written and run (the steps up to that run)."""
    return next(i for i, s in enumerate(traj.steps) if s.arguments.get("command", "").endswith(REPRO)) + 1


@pytest.fixture(scope="module")
def task():
    return next(t for t in load_tasks(path_of("demo")) if t.instance_id == IID)


@pytest.fixture(scope="module")
def backend():
    return RealBackend()


def stored(out) -> dict[int, Trajectory]:
    return {t.sample: t for t in TrajectoryStore(out / "trajectories.jsonl").load()}


def lines(out) -> int:
    return len((out / "trajectories.jsonl").read_text().splitlines())


class ShellProbe(ScriptedPolicy):
    """Two prefix steps (a cd and an export; a file), then each sample writes a file of its own and
    shows what it sees."""

    name = "shell-probe"

    def __init__(self) -> None:
        super().__init__()
        self.sample: int | None = None

    def bind(self, instance_id: str, sample: int) -> ShellProbe:
        self.sample = sample
        return self

    def actions(self, task):
        return [("execute_bash", {"command": "cd /testbed/more_itertools && export BRANCH_MARK=from-prefix"}, ""),
                ("execute_bash", {"command": "echo shared > /testbed/shared.txt"}, ""),
                ("execute_bash", {"command": f"echo {self.sample} > /testbed/own.txt; pwd; echo mark=$BRANCH_MARK; "
                                             "ls /testbed"}, ""),
                ("execute_bash", {"command": "cat /testbed/shared.txt /testbed/own.txt"}, "")]


@pytest.mark.bwrap
@pytest.mark.network
def test_branches_share_the_prefix_and_nothing_of_each_other(task, backend, tmp_path):
    summary = run_rollouts([task], ShellProbe, RolloutConfig(out=tmp_path, branch_at=2, branches=3, evaluate=False),
                           agent=load_agent_config(), backend=backend)
    found = stored(tmp_path)
    assert sorted(found) == [0, 1, 2] and not any(t.failed for t in found.values())
    assert {t.prefix_id for t in found.values()} == {found[0].prefix_id} and found[0].prefix_id
    assert [found[k].branch for k in range(3)] == [0, 1, 2]
    assert {t.prefix_steps for t in found.values()} == {2} and not any(t.prefix_ended for t in found.values())
    prefix = [(s.arguments, s.observation, s.exit_code) for s in found[0].steps[:2]]
    for sample, traj in found.items():
        assert [(s.arguments, s.observation, s.exit_code) for s in traj.steps[:2]] == prefix
        shown = traj.steps[2].observation
        assert "/testbed/more_itertools" in shown and "mark=from-prefix" in shown  # cwd and export forked
        assert traj.steps[3].observation.split()[:2] == ["shared", str(sample)]  # its own file, no sibling's
        assert "+shared" in traj.patch and f"+{sample}\n" in traj.patch
        assert traj.exit_status == "submitted" and len(traj.steps) == 5
    assert summary["branching"] == {"branch_at": 2, "branches": 3, "prefixes": 1, "ended_in_prefix": 0, "forks": 2}

    # a branch without an outcome: the rerun runs the prefix again, and its three records share a new prefix
    broken = found[1].model_copy(update={"error": "SandboxError: lost", "error_kind": "infra", "exit_status": "error"})
    TrajectoryStore(tmp_path / "trajectories.jsonl").append(broken)
    run_rollouts([task], ShellProbe, RolloutConfig(out=tmp_path, branch_at=2, branches=3, evaluate=False),
                 agent=load_agent_config(), backend=backend)
    again = stored(tmp_path)
    assert lines(tmp_path) == 3 + 1 + 3 and not any(t.failed for t in again.values())
    assert len({t.prefix_id for t in again.values()}) == 1 and again[0].prefix_id != found[0].prefix_id
    run_rollouts([task], ShellProbe, RolloutConfig(out=tmp_path, branch_at=2, branches=3, evaluate=False),
                 agent=load_agent_config(), backend=backend)
    assert lines(tmp_path) == 7  # done: nothing runs again


@pytest.mark.bwrap
@pytest.mark.network
def test_a_refused_snapshot_leaves_the_forks_without_an_outcome_and_branch_0_goes_on(task, tmp_path, monkeypatch):
    def refused(sandbox):  # as a snapshot over the episode's disk bound is (disk=1 would now end the episode)
        raise SnapshotError("snapshot refused: over the episode's disk limit")
    monkeypatch.setattr(Sandbox, "snapshot", refused)
    tight = RealBackend()
    summary = run_rollouts([task], ShellProbe, RolloutConfig(out=tmp_path, branch_at=2, branches=3, evaluate=False),
                           agent=load_agent_config(), backend=tight)
    found = stored(tmp_path)
    assert not found[0].failed and found[0].exit_status == "submitted" and "+0\n" in found[0].patch
    for sample in (1, 2):
        assert found[sample].error_kind == "infra" and "SnapshotError" in found[sample].error
        assert found[sample].prefix_id == found[0].prefix_id and found[sample].branch == sample
    assert summary["errors"] == 2 and summary["trajectories"] == 1


@pytest.mark.bwrap
@pytest.mark.network
def test_branches_are_the_samples_full_rollouts_make_graded_by_the_harness(task, backend, tmp_path):
    """explorer-perturb explores (tests and a reproduction script run for real) in the prefix, then
    each branch draws its own edit: the patches and verdicts of K full rollouts, from one prefix."""
    make = partial(ExplorerPolicy, fix="perturb", mutate=mutations_for_file)
    full = tmp_path / "full"
    run_rollouts([task], make, RolloutConfig(out=full, n_samples=3), agent=load_agent_config(), backend=backend)
    alone = stored(full)
    prefix = explored(alone[0])
    assert {explored(t) for t in alone.values()} == {prefix}
    branched = tmp_path / "branched"
    summary = run_rollouts([task], make, RolloutConfig(out=branched, branch_at=prefix, branches=3),
                           agent=load_agent_config(), backend=backend)
    shared = stored(branched)
    assert sorted(shared) == [0, 1, 2] and not any(t.failed for t in [*alone.values(), *shared.values()])
    assert {k: (t.patch, t.reward) for k, t in shared.items()} == {k: (t.patch, t.reward) for k, t in alone.items()}
    assert len({t.patch for t in shared.values()}) > 1  # three samples, not one
    assert shared[0].actions() == alone[0].actions()  # branch 0 is sample 0's episode, paused and gone on
    for traj in shared.values():
        assert traj.prefix_steps == prefix and traj.report is not None
        assert traj.report["resolved"] == (traj.reward == 1.0)
        assert traj.steps[prefix - 1].exit_code == 1  # the reproduction fails before the edit
        after = [s for s in traj.steps[prefix:] if s.arguments.get("command", "").endswith(REPRO)]
        assert after and after[0].exit_code in (0, 1) and "failing" in after[0].observation  # the prefix's script
        if traj.reward == 1.0:
            assert after[0].exit_code == 0
    assert summary["trajectories"] == 3 and summary["branching"]["forks"] == 2
    assert len((branched / "predictions.all.jsonl").read_text().splitlines()) == 3


@pytest.mark.bwrap
@pytest.mark.network
def test_an_episode_that_ends_in_the_prefix_is_one_trajectory_that_says_so(task, backend, tmp_path):
    summary = run_rollouts([task], NoopPolicy, RolloutConfig(out=tmp_path, branch_at=3, branches=4),
                           agent=load_agent_config(), backend=backend)
    found = stored(tmp_path)
    assert list(found) == [0]
    only = found[0]
    assert only.prefix_ended is True and only.branch == 0 and only.prefix_steps == 1 and only.exit_status == "submitted"
    assert only.reward == 0.0
    assert summary["branching"]["ended_in_prefix"] == 1 and summary["branching"]["forks"] == 0
    run_rollouts([task], NoopPolicy, RolloutConfig(out=tmp_path, branch_at=3, branches=4),
                 agent=load_agent_config(), backend=backend)
    assert lines(tmp_path) == 1  # done: its other branches do not exist, and are not run again


def test_a_backend_whose_episodes_cannot_fork_is_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="FakeExecutor has no snapshot/fork/restore") as caught:
        run_rollouts([TASK], NoopPolicy, RolloutConfig(out=tmp_path, branch_at=1, branches=2, evaluate=False),
                     agent=load_agent_config(), backend=FakeBackend({TASK.instance_id: FILES}))
    assert "--branches" in str(caught.value)
    assert not (tmp_path / "trajectories.jsonl").exists() or not (tmp_path / "trajectories.jsonl").read_text()


def test_branch_at_and_branches_go_together():
    with pytest.raises(ValueError, match="branch_at and branches go together"):
        RolloutConfig(branch_at=3)
    assert RolloutConfig(branch_at=0, branches=4, n_samples=2).samples_per_instance == 8
    assert Trajectory.model_validate({"instance_id": "x"}).prefix_id is None  # an old record reads


@pytest.mark.bwrap
@pytest.mark.network
def test_the_cli_branches_on_the_sim_backend(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["rollout", "-d", "demo", "-i", IID, "--backend", "sim", "--world", "embedded",
                                      "--policy", "explorer-perturb", "--branch-at", str(PREFIX), "--branches", "2",
                                      "-o", str(out)])
    assert result.exit_code in (0, 1), result.output  # 1: no sample resolved
    config = load(RolloutConfig, out / CONFIG_FILE)
    assert (config.branch_at, config.branches) == (PREFIX, 2)
    found = stored(out)
    assert sorted(found) == [0, 1] and {t.backend for t in found.values()} == {"sim"}
    assert found[0].prefix_id == found[1].prefix_id and [found[0].branch, found[1].branch] == [0, 1]
    assert all(t.reward in (0.0, 1.0) for t in found.values())
    assert "branching" in result.output
