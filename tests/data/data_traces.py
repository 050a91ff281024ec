"""Real traces for the world-data tests: the world tests' traced episodes (commands really run in a
git tree, the evaluation really run and graded), one fixed (resolved) and one wrongly fixed."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "world"))  # the world tests' helpers

from world_traces import WRONG, record_episode

from sweworld.world.traces import TraceStore


def record(root: Path) -> Path:
    """traces.jsonl of two episodes: local/calc fixed (resolved), local/mul wrongly fixed (not)."""
    store = TraceStore(root / "traces.jsonl")
    record_episode(root / "calc", store, "local/calc")
    record_episode(root / "mul", store, "local/mul", fix=WRONG)
    return store.path
