"""An append-only JSONL store of trajectories that survives a crash: each record is written and
flushed to disk whole, a torn last line (killed mid-write) is ignored and overwritten (the writer is
``shipping.append_lines``, the one of every append-only file)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from sweworld.parallel import shipping
from sweworld.trajectory import Trajectory


class TrajectoryStore:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        shipping.cut_torn_tail(path)  # a record cut short by a crash: neither loaded nor kept

    def load(self) -> list[Trajectory]:
        found: dict[tuple[str, int], Trajectory] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    traj = Trajectory.model_validate(json.loads(line))
                except (json.JSONDecodeError, ValidationError):
                    continue
                found[traj.key] = traj
        return list(found.values())

    def done(self) -> set[tuple[str, int]]:
        """The samples that have an outcome (a failed one is to be run again)."""
        return {t.key for t in self.load() if not t.failed}

    def append(self, traj: Trajectory) -> None:
        shipping.append_lines(self.path, [traj.model_dump_json()])
