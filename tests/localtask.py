"""A task over a small local git repository (no network): its dataset file, for tests that run the CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path


def local_dataset(tree: Path, tmp_path: Path) -> Path:
    """One task over ``tree`` (a local git repository: no network), saved as a dataset."""
    from sweworld.core.types import Task
    from sweworld.tasks import save_tasks
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    task = Task(instance_id="local__tree-1", repo="local/tree", base_commit=commit, version="1", python="3.11",
                install="true", test_cmd="true", repo_source=str(tree))
    return save_tasks([task], tmp_path / "tasks.jsonl")
