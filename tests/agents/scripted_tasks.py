"""Tasks for the reactive scripted policies' tests: a small two-bug module (offline), real tasks of
the shipped default dataset with their base files (network), and episodes on the in-memory fake
executor of the seam tests (the policies only view and edit: no environment is needed)."""

from __future__ import annotations

from tests.backends.fake import FakeExecutor, file_diff

from sweworld.agents.config import load_agent_config
from sweworld.agents.loop import run_episode
from sweworld.core.types import Task
from sweworld.trajectory import Trajectory

MODULE = "pkg/mod.py"
GOOD = '''"""Small helpers."""


def scale(x, lo, hi):
    """Where x lies in [lo, hi], from 0 to 1."""
    if x < lo:
        raise ValueError("below the range")
    span = hi - lo
    return (x - lo) / span


def total(items, start=0):
    """Sum of items."""
    result = start
    for item in items:
        if item is None:
            continue
        result += item
    return result


def countdown(n, step=1):
    """The values from n down to 0."""
    values = []
    while n >= 0:
        values.append(n)
        n -= step
    return values
'''
BUGGY = GOOD.replace("    if x < lo:", "    if x >= lo:").replace("result += item", "result -= item")


def two_bug_task() -> tuple[Task, dict[str, str]]:
    """A task whose gold patch has two hunks (two bugs), and its base files."""
    task = Task(instance_id="pkg__two-bugs", repo="local/pkg", base_commit="0" * 40,
                patch=file_diff(MODULE, BUGGY, GOOD), FAIL_TO_PASS=["tests/test_mod.py::test_scale"],
                problem_statement="scale and total are wrong")
    return task, {MODULE: BUGGY}


def default_tasks(count: int = 10) -> list[tuple[Task, dict[str, str]]]:
    """``count`` tasks of the shipped default dataset, spread over its repositories and mutation
    kinds (multi-hunk ones included), each with the base text of the files its gold patch touches."""
    from unidiff import PatchSet

    from sweworld.datasets import path_of
    from sweworld.repos import RepoStore
    from sweworld.tasks import load_tasks

    tasks = sorted(load_tasks(path_of("default")), key=lambda t: t.instance_id)
    chosen: dict[tuple[str, str], Task] = {}
    for task in tasks:
        chosen.setdefault((task.repo, task.method if task.method == "combine" else ""), task)
    picked = sorted(chosen.values(), key=lambda t: (t.method != "combine", t.instance_id))[:count]
    store = RepoStore()
    out = []
    for task in picked:
        root = store.base_tree(task)
        out.append((task, {p.path: (root / p.path).read_text(encoding="utf-8") for p in PatchSet(task.patch)}))
    return out


def episode(task: Task, files: dict[str, str], policy) -> Trajectory:
    """One episode of ``policy`` on a fake executor holding ``files`` at /testbed."""
    return run_episode(task, FakeExecutor(dict(files)), policy, load_agent_config())
