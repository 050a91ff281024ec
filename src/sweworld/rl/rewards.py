"""``sweworld.rl.rewards``: an alias of the reward's homes, ``sweworld.seam.reward`` (``reward_of``,
the one meaning of reward) and ``sweworld.seam.completions`` (``SWEReward``, ``patch_of``)."""

from __future__ import annotations

from sweworld.seam.completions import SWEReward, patch_of
from sweworld.seam.reward import reward_of

__all__ = ["SWEReward", "patch_of", "reward_of"]
