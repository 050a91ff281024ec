"""The swr verifier with the shipped embedded SWR (base files in memory): it ranks the gold revert
above another mutation, so best-of-n picks the resolving sample."""

from __future__ import annotations

from realtasks import unified
from sweworld.core.types import Task
from sweworld.surrogates.swr import EmbeddedSWR
from sweworld.trajectory import Trajectory
from sweworld.verify import SWRVerifier, select

PATH = "clamp/core.py"
FIXED = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"
BUGGY = FIXED.replace("return hi", "return lo")
TASK = Task(instance_id="local__clamp-1", repo="local/clamp", base_commit="0" * 40, patch=unified(PATH, BUGGY, FIXED),
            FAIL_TO_PASS=["tests/test_clamp.py::test_high"], PASS_TO_PASS=[])


def test_the_shipped_swr_ranks_the_revert_first():
    verifier = SWRVerifier(EmbeddedSWR(sources=lambda task: {PATH: BUGGY}.get))
    mutated = FIXED.replace("x < lo", "x <= lo").replace("return lo", "return lo + 1")
    samples = [Trajectory(instance_id=TASK.instance_id, sample=i, reward=reward, patch=unified(PATH, BUGGY, text),
                          exit_status="submitted")
               for i, (text, reward) in enumerate([(mutated, 0.0), (FIXED, 1.0), (BUGGY + "\n# kept\n", 0.0)])]
    result = select([("run", t) for t in samples], verifier, {TASK.instance_id: TASK})
    assert result.picks[TASK.instance_id].trajectory.sample == 1
    assert result.best_at == result.pass_at == {1: round(1 / 3, 4), 2: round(2 / 3, 4), 3: 1.0}
