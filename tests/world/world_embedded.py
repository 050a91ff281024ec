"""Real traces for the embedded SWT.

- ``local_episode``: a small git tree (``pkg.add`` broken; pytest functions and a ``TestCase``; an
  unrelated test file) whose commands really run (``DirExecutor``) and are traced: pytest -v and -q,
  unittest -v, a script, before and after the fix. No sandbox needed.
- ``ExplorePolicy`` / ``collect``: what agents run around the oracle's edits (the failing tests, a
  full report, an import check, a grep), collected with the real backend on shipped instances:
  demo's more-itertools tasks and synthesized ones of other repositories.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.conftest import make_git_tree
from unidiff import PatchSet
from world_direxec import DirExecutor
from world_tasks import _diff_of

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import TestingOraclePolicy
from sweworld.backends.real import RealBackend
from sweworld.core.config import RolloutConfig
from sweworld.core.types import Task
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.tasks.load import load_tasks
from sweworld.world.traces import TRACES_FILE, TraceStore, load_traces
from sweworld.world.tracing import TracingExecutor

PY = shlex.quote(sys.executable)
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = BUGGY.replace("a - b", "a + b")
TESTS = ("import unittest\n\nfrom pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n\n\nclass TestMore(unittest.TestCase):\n"
         "    def test_neg(self):\n        self.assertEqual(add(-1, -1), -2)\n\n"
         "    def test_same(self):\n        self.assertEqual(add(2, 0), 2)\n")
OTHER = "def test_one():\n    assert 1 == 1\n"
PYTEST = f"{PY} -m pytest -p no:cacheprovider"
RECORDED_BEFORE = [f"{PYTEST} -v tests", f"{PYTEST} -q tests", f"{PY} -m unittest -v tests.test_add",
                   f"{PY} reproduce.py"]
RECORDED_AFTER = [f"{PY} reproduce.py"]


def local_episode(root: Path, store: TraceStore) -> tuple[DirExecutor, Task]:
    """The local task, its commands run and traced before and after the fix (the tree keeps it)."""
    tree, commit = make_git_tree(root, {"pkg/__init__.py": BUGGY, "tests/test_add.py": TESTS,
                                        "tests/test_other.py": OTHER, "reproduce.py": "from pkg import add\n"
                                        "print(add(1, 2))\n", ".gitignore": "__pycache__/\n"})
    tests = "tests/test_add.py::"
    task = Task(instance_id="local__calc-2", repo="local/calc", base_commit=commit, problem_statement="add subtracts",
                patch=_diff_of(tree, {"pkg/__init__.py": FIXED}), test_cmd="pytest -rA",
                FAIL_TO_PASS=[f"{tests}test_add", f"{tests}TestMore::test_neg"],
                PASS_TO_PASS=[f"{tests}test_zero", f"{tests}TestMore::test_same", "tests/test_other.py::test_one"])
    executor = DirExecutor(tree, commit)
    traced = TracingExecutor(executor, task, store)
    for text, commands in ((BUGGY, RECORDED_BEFORE), (FIXED, RECORDED_AFTER), (BUGGY, [])):
        traced.write_file("pkg/__init__.py", text)
        for command in commands:
            traced.run(command)
    return executor, task

DEMO = ["more-itertools__first-default", "more-itertools__first-and-ilen", "more-itertools__first-new-test"]
OTHER_REPOS = ["pypi/cachetools", "pypi/inflection"]


def package_of(task: Task) -> str:
    """The top-level package the gold patch changes (``src/pkg/mod.py`` -> ``pkg``)."""
    path = PatchSet(task.patch)[0].path
    parts = [p for p in path.split("/") if p not in ("src", "lib")]
    return parts[0].removesuffix(".py")


def tests_of(task: Task) -> str:
    return " ".join(shlex.quote(t) for t in [*task.FAIL_TO_PASS[:4], *task.PASS_TO_PASS[:3]])


def bash(command: str) -> tuple[str, dict, str]:
    return ("execute_bash", {"command": command}, "")


class ExplorePolicy(TestingOraclePolicy):
    """Failing tests (-q | tail), a -rA report, an import check and a grep; the oracle's edits; then
    the failing tests again, a -v report, a -rA report and the import check again."""

    name = "explore-fix"

    def actions(self, task: Task) -> list[tuple[str, dict, str]]:
        tests, package = tests_of(task), package_of(task)
        run = f"cd {self.workdir} && python -m pytest -p no:cacheprovider"
        check = bash(f"python -c 'import {package}; print({package}.__name__)'")
        before = [bash(f"{run} -q {tests_of(task)} 2>&1 | tail -15"), bash(f"{run} -rA {tests}"), check,
                  bash(f"grep -rn 'def ' {shlex.quote(PatchSet(task.patch)[0].path)} | head -5")]
        after = [bash(f"{run} -q {tests_of(task)} 2>&1 | tail -15"), bash(f"{run} -v {tests}"),
                 bash(f"{run} -rA {tests}"), check]
        return [*before, *super(TestingOraclePolicy, self).actions(task), *after]


def shipped_tasks(per_repo: int = 1, repos: list[str] = OTHER_REPOS) -> list[Task]:
    """Demo's more-itertools tasks and ``per_repo`` synthesized tasks of each of ``repos`` (lite)."""
    demo = {t.instance_id: t for t in load_tasks(path_of("demo"))}
    lite = load_tasks(path_of("lite"))
    return [demo[i] for i in DEMO] + [t for repo in repos for t in [x for x in lite if x.repo == repo][:per_repo]]


def collect(tasks: list[Task], out: Path) -> list:
    """Roll ``ExplorePolicy`` out on ``tasks`` with the real backend; the recorded traces."""
    summary = run_rollouts(tasks, ExplorePolicy, RolloutConfig(out=out), agent=load_agent_config(),
                           backend=RealBackend(traces=out / TRACES_FILE))
    assert summary["resolve_rate"] == 1.0, summary
    return load_traces(out)
