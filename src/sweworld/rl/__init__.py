"""The RL-facing API: what an RL trainer's rollout loop calls.

- ``collect(policy, tasks, n_samples, backend)``: an async iterator of ``Sample`` (trajectory,
  reward, backend), each yielded as soon as its episode is graded; items run on a runner
  (``sweworld.runs.runner``: threads here, or Ray tasks).
- ``reward_of(report)`` and ``SWEReward``: the environment's reward for verl/TRL-style trainers
  (the harness verdict with the real backend, SWR's P(resolved) with the sim backend).
- ``SWEWorldTextEnv``: one task as a SkyRL-gym text environment (``init``/``step``/``close``).
"""

from __future__ import annotations

from sweworld.rl.collect import Sample, collect
from sweworld.rl.rewards import SWEReward, patch_of, reward_of
from sweworld.rl.skyrl import SWEWorldTextEnv

__all__ = ["SWEReward", "SWEWorldTextEnv", "Sample", "collect", "patch_of", "reward_of"]
