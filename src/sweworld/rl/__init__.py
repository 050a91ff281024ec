"""The RL-facing names, kept where users import them; each lives with its kind:

- ``collect(policy, tasks, n_samples, backend)`` and ``Sample``: ``sweworld.runs.collect`` (an async
  iterator of graded samples, each yielded as soon as its episode is graded, on any runner);
- ``reward_of(report)``: ``sweworld.seam.reward`` (the one meaning of reward); ``SWEReward`` and
  ``patch_of``: ``sweworld.seam.completions`` (TRL's and verl's reward functions over completions);
- ``SWEWorldTextEnv``: ``sweworld.integrations.skyrl`` (one task as a SkyRL-gym text environment).

GRPO with TRL is ``sweworld.train.grpo`` (``sweworld train rl``).
"""

from __future__ import annotations

from sweworld.integrations.skyrl import SWEWorldTextEnv
from sweworld.runs.collect import Sample, collect
from sweworld.seam.completions import SWEReward, patch_of
from sweworld.seam.reward import reward_of

__all__ = ["SWEReward", "SWEWorldTextEnv", "Sample", "collect", "patch_of", "reward_of"]
