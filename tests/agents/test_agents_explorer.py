"""The explorer policy: the commands agents run (layout, find, views, grep, the failing tests, a
reproduction script, the test files, git diff), then optionally the oracle's or perturb's edits;
on the fake executor (the commands' answers do not steer it) and on a real task of the default
dataset. Its real runs are in test_agents_scripted_real.py."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from scripted_tasks import default_tasks, episode, two_bug_task

from sweworld.agents.explorer import SCRIPT, ExplorerPolicy, module_of, reproduction_script
from sweworld.agents.perturb import PerturbPolicy, perturb_kind
from sweworld.agents.policies import OraclePolicy
from sweworld.synth import mutations_for_file


def explorer(fix: str, sample: int, task, seed: int = 0) -> ExplorerPolicy:
    return ExplorerPolicy(fix=fix, seed=seed, mutate=mutations_for_file).bind(task.instance_id, sample)


def commands(traj) -> list[str]:
    return [s.arguments["command"] for s in traj.steps if s.tool == "execute_bash"]


def check_exploration(task, traj) -> None:
    runs = commands(traj)
    tests = [c for c in runs if "python -m pytest" in c]
    assert any(all(t in c for t in task.FAIL_TO_PASS[:5]) for c in tests), runs
    whole = f" {task.FAIL_TO_PASS[0].split('::')[0]}"  # the whole test file, piped through tail or not
    assert any(c.endswith(whole) or f"{whole} 2>&1" in c for c in tests)
    assert f"cd /testbed && python {SCRIPT}" in runs and f"rm /testbed/{SCRIPT}" in runs
    assert any(c.startswith("find /testbed -name ") for c in runs)
    assert any(c.startswith("cd /testbed && git") and "git diff" in c for c in runs)
    created = [s for s in traj.steps if s.arguments.get("command") == "create"]
    assert [s.arguments["path"] for s in created] == [f"/testbed/{SCRIPT}"]
    ast.parse(created[0].arguments["file_text"])
    grep = [s for s in traj.steps if s.tool == "search" or "grep -rn" in s.arguments.get("command", "")]
    assert grep and traj.steps[-1].tool == "submit" and traj.exit_status == "submitted"


def test_explorer_runs_the_commands_agents_run_and_edits_nothing():
    task, files = two_bug_task()
    for sample in range(3):
        traj = episode(task, files, explorer("none", sample, task))
        check_exploration(task, traj)
        assert traj.patch == "" and perturb_kind(s.thought for s in traj.steps) is None
        assert any("scale" in s.arguments.get("command", "") + s.arguments.get("search_term", "")
                   for s in traj.steps if s.tool in ("execute_bash", "search"))


def test_explorer_with_a_fix_ends_with_the_oracles_or_perturbs_patch():
    task, files = two_bug_task()
    oracle = episode(task, files, OraclePolicy()).patch
    assert episode(task, files, explorer("oracle", 0, task)).patch == oracle
    for sample in range(4):
        traj = episode(task, files, explorer("perturb", sample, task))
        alone = episode(task, files, PerturbPolicy(mutate=mutations_for_file).bind(task.instance_id, sample))
        check_exploration(task, traj)
        assert traj.patch == alone.patch  # the same draw: the same kind and edits
        assert perturb_kind(s.thought for s in traj.steps) == perturb_kind(s.thought for s in alone.steps)


def test_explorer_variants_are_drawn_per_sample_and_reproducible():
    task, files = two_bug_task()

    def actions(sample: int):
        return [(s.tool, s.arguments) for s in episode(task, files, explorer("none", sample, task)).steps]
    assert [actions(k) for k in range(4)] == [actions(k) for k in range(4)]
    assert len({repr(actions(k)) for k in range(6)}) > 1


def test_the_reproduction_script_imports_the_module_and_runs_the_failing_tests(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("class Box:\n    def size(self):\n        return 1\n")
    (tmp_path / "tests" / "test_mod.py").write_text(
        "import unittest\nfrom pkg.mod import Box\n\n\ndef test_size():\n    assert Box().size() == 2\n\n\n"
        "class T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(Box().size(), 1)\n")
    tests = ["tests/test_mod.py::test_size", "tests/test_mod.py::T::test_ok"]
    (tmp_path / SCRIPT).write_text(reproduction_script("pkg/mod.py", "size", tests))
    done = subprocess.run([sys.executable, SCRIPT], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "Box.size" in done.stdout
    assert "FAIL tests/test_mod.py::test_size" in done.stdout and "PASS tests/test_mod.py::T::test_ok" in done.stdout
    assert [module_of(p) for p in ("src/pkg/a.py", "pkg/__init__.py", "mod.py")] == ["pkg.a", "pkg", "mod"]


@pytest.mark.network
def test_explorer_on_default_tasks():
    for task, files in default_tasks(3):
        traj = episode(task, files, explorer("perturb", 1, task))
        check_exploration(task, traj)
        assert perturb_kind(s.thought for s in traj.steps) is not None
