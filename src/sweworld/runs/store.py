"""An append-only JSONL store of trajectories that survives a crash: each record is written and
flushed to disk whole, a torn last line (killed mid-write) is ignored and overwritten."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pydantic import ValidationError

from sweworld.trajectory import Trajectory


class TrajectoryStore:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._truncate_torn_tail()

    def _truncate_torn_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end != len(data):  # a record cut short by a crash
            with open(self.path, "r+b") as handle:
                handle.truncate(end)

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
        line = traj.model_dump_json() + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
