"""``sweworld.rl.collect``: an alias of ``sweworld.runs.collect``, where the collector lives."""

from __future__ import annotations

from sweworld.runs.collect import Sample, collect

__all__ = ["Sample", "collect"]
