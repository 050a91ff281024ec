"""``sweworld.rl.skyrl:SWEWorldTextEnv``, the documented SkyRL-Gym entry point: an alias of
``sweworld.integrations.skyrl``, where the seam lives."""

from __future__ import annotations

from sweworld.integrations.skyrl import SWEWorldTextEnv

__all__ = ["SWEWorldTextEnv"]
