"""The runner binds a per-sample policy to its (instance, sample) pair: each sample draws its own,
whatever order the pool runs them in (a plain factory used to give every sample the draw of 0)."""

from __future__ import annotations

import json

from tests.backends.fake import FakeBackend
from tests.backends.test_backends_seam import FILES, TASK

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import ScriptedPolicy
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.runs.rollout import run_rollouts


class SamplePolicy(ScriptedPolicy):
    name = "sample-probe"

    def __init__(self) -> None:
        super().__init__()
        self.pair: tuple[str, int] | None = None

    def bind(self, instance_id: str, sample: int) -> SamplePolicy:
        self.pair = (instance_id, sample)
        return self

    def actions(self, task):
        return [("execute_bash", {"command": "true"}, f"bound to {self.pair}")]


def test_each_sample_gets_a_policy_bound_to_it(tmp_path):
    run_rollouts([TASK], SamplePolicy,
                 RolloutConfig(out=tmp_path, n_samples=3, runner=RunnerConfig(workers=3), evaluate=False),
                 agent=load_agent_config(), backend=FakeBackend({TASK.instance_id: FILES}))
    rows = [json.loads(line) for line in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    thoughts = {row["sample"]: row["steps"][0]["thought"] for row in rows}
    assert thoughts == {k: f"bound to ('{TASK.instance_id}', {k})" for k in range(3)}
