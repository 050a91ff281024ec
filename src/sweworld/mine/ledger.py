"""The ledger of a mining run: one JSON line per validated candidate, appended as verdicts arrive.

It lives beside the output (``OUT.mine.jsonl``). A killed run loses at most the candidates that
were in flight; the next run with the same candidates reads the ledger and validates only the rest
(a verdict is reused when its key, the hash of the instance as validated and of the validation's
settings, is the same). Only the driver writes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from sweworld.core.types import Task
from sweworld.tasks.rows import dump_row

LEDGER_VERSION = 2
"""2: verdicts of the rules of mined instances (``runs.validate``: the runs before the fix bounded, the
collection rule) and causes; a ledger of version 1 is not reused."""
PROVENANCE = ("recipe_spec_version", "recipe_specs")
"""Row fields that describe the recipe without deciding the verdict (left out of the key, so that
ledgers written before them still resume)."""


def verdict_key(task: Task, timeout: float, runs: int) -> str:
    """What decides a verdict: the row without its statement, and the validation's settings."""
    row = dump_row(task)
    for name in ("problem_statement", "hints_text", "statement_source", "references", *PROVENANCE):
        row.pop(name, None)
    payload = {"v": LEDGER_VERSION, "row": row, "timeout": timeout, "runs": runs}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


class Ledger:
    def __init__(self, path: Path | None):
        self.path = path
        self.known: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if path is not None and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the last line of a killed run
                if isinstance(entry, dict) and "key" in entry:
                    self.known[entry["key"]] = entry

    def add(self, entry: dict[str, Any]) -> None:
        if self.path is None:
            return
        with self._lock:
            self.known[entry["key"]] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
