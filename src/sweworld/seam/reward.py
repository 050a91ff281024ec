"""The one meaning of reward, for every seam and trainer.

A graded patch's reward is:

- **real**: 1.0 when the harness resolves it, else 0.0 (SWE-bench's verdict);
- **sim**: SWR's P(resolved) (``sim_probability`` of the report); an empty patch gets 0.0, with no
  model call;
- **hybrid**: the routed verdict: the harness's 1.0/0.0 where the evaluation ran for real, SWR's
  P(resolved) where it was simulated;
- **an infrastructure failure** (no report, or ``error_kind == "infra"``: a sandbox, an environment,
  a world that cannot run its checker or its tests (``harness.worldcheck``), an SWR that cannot
  answer): no outcome. ``reward_of`` says None; ``grade`` gives 0.0 with the error and
  ``Graded.outcome == "infra"`` (an infrastructure 0, never a verdict), which a trainer may drop.

A seam that needs 0/1 (gymnasium's ``SWEEnv`` with ``binary_reward=True``, a Harbor
``reward.txt``, inspect's CORRECT/INCORRECT) asks ``grade`` for it with ``binary=True``, which is
``resolved`` as 1.0/0.0; it never applies a rule of its own.
"""

from __future__ import annotations

from typing import Any

from sweworld.harness.report import InstanceReport


def reward_of(report: InstanceReport | dict[str, Any] | None, *, binary: bool = False) -> float | None:
    """The reward of a graded patch (see the module docstring); ``binary``: 1.0 resolved, 0.0 not."""
    if report is None:
        return None
    data = report if isinstance(report, dict) else report.model_dump()
    if data.get("error_kind") == "infra":
        return None
    probability = data.get("sim_probability")
    if probability is not None and not binary:
        return float(probability)
    return 1.0 if data.get("resolved") else 0.0
