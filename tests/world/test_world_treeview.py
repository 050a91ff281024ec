"""A base tree read in place (``world.treeview.TreeView``) answers what an episode's script answers
(``testfiles.inspect_patch``), on a local git tree and on a real base tree against a real isolated
episode of it, leaves the tree as it was, and a sim evaluation through it starts no sandbox."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from tests.conftest import make_git_tree
from world_direxec import DirExecutor
from world_tasks import FIXED, NEW_TEST, calc_task, world_model

from realtasks import MODULE, real_tasks, unified
from realtasks import NEW_TEST as REAL_NEW_TEST
from sweworld.backends.sim import SimBackend
from sweworld.core.types import Task
from sweworld.harness.patches import apply_patch
from sweworld.harness.predictions import Prediction
from sweworld.repos import RepoStore
from sweworld.sandbox import Layers, Sandbox
from sweworld.surrogates.swr.swr import EmbeddedSWR
from sweworld.world.swt import SWT
from sweworld.world.testfiles import inspect_patch
from sweworld.world.treeview import TreeView


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root`` (``.git`` included): its digest and mtime (0 for an object, whose
    time git refreshes when a result it would write is already there)."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                       0 if ".git/objects/" in str(p) else p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def variants(patch: str, path: str, text: str) -> list[str | None]:
    """The gold patch, one that does not apply, one creating a file, one deleting ``path``, garbage,
    an empty one and none."""
    wrong = re.sub(r"\n-(?!--)", "\n-#", patch, count=1)
    created = unified("added/new_module.py", "", "VALUE = 1\n")
    deleted = f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n" + "".join(
        unified(path, text, "").splitlines(keepends=True)[1:]).replace(f"+++ b/{path}", "+++ /dev/null")
    return [patch, wrong, created, deleted, "this is not a patch\n", "", None]


def test_answers_as_the_episode_script_and_leaves_the_tree_as_it_was(tmp_path):
    executor, task = calc_task(tmp_path)
    paths = ["tests/test_add.py", "tests/absent.py", "pkg/__init__.py"]
    view = TreeView(executor.root)
    base = executor.read_file("pkg/__init__.py")
    for patch in variants(task.patch, "pkg/__init__.py", base):
        for case in (task, task.model_copy(update={"test_patch": ""})):
            assert view.inspect_patch(case, patch, paths, limit=16_000) == inspect_patch(executor, case, patch, paths), patch
    before = snapshot(executor.root)  # the script freshens the objects it writes; the view writes none
    got = view.inspect_patch(task, task.patch, paths, limit=16_000)
    assert (got.git, got.applied, got.test_patch_applied) == (True, True, True)
    assert dict(got.files)["tests/test_add.py"] == NEW_TEST
    assert view.inspect_patch(task, variants(task.patch, "", "")[1], [], limit=1).applied is False
    assert view.inspect_patch(task, variants(task.patch, "", "")[2], [], limit=1).applied is True
    assert snapshot(executor.root) == before
    assert inspect_patch(view, task, FIXED, []).applied is False  # the module-level dispatch asks the view


def test_read_file_stays_inside_the_tree(tmp_path):
    executor, _ = calc_task(tmp_path)
    (tmp_path / "secret.txt").write_text("host file\n")
    os.symlink(tmp_path / "secret.txt", executor.root / "out_link")
    os.symlink("pkg/__init__.py", executor.root / "in_link")
    view = TreeView(executor.root)
    assert view.read_file("in_link") == executor.read_file("pkg/__init__.py")
    for path in ("out_link", "../secret.txt", str(tmp_path / "secret.txt"), "pkg", "absent.py"):
        with pytest.raises(FileNotFoundError):
            view.read_file(path)


@pytest.mark.bwrap
@pytest.mark.network
def test_a_real_base_tree_answers_as_its_isolated_episode(tmp_path, monkeypatch):
    """more-itertools' real base tree: the view against a real episode of it (bwrap, overlay), for
    a task with a test patch and one without; then a sim evaluation through the backend opens no
    sandbox."""
    tasks = real_tasks()
    store = RepoStore()
    for task in (tasks["test_patch"], tasks["first"]):
        tree = store.base_tree(task)
        before = snapshot(tree)
        paths = [REAL_NEW_TEST, "tests/test_more.py", MODULE]
        view = TreeView(tree)
        with Sandbox({"/testbed": Layers([tree])}, base_commit=task.base_commit) as episode:
            base = episode.read_file(MODULE)
            for patch in variants(task.patch, MODULE, base):
                assert view.inspect_patch(task, patch, paths, limit=4_000) == inspect_patch(
                    episode, task, patch, paths, limit=4_000), (task.instance_id, (patch or "")[:80])
        assert snapshot(tree) == before

    def no_sandbox(*args, **kwargs):
        raise AssertionError("a sim evaluation opened a sandbox")

    task = tasks["first"]
    monkeypatch.setattr(Sandbox, "__init__", no_sandbox)
    sim = SimBackend(swt=SWT(world_model("http://127.0.0.1:9/v1")), swr=EmbeddedSWR())  # SWT unused: no episode
    report = sim.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=task.patch),
                                             tmp_path / "sim")
    assert report.error is None and report.resolved and report.sim_probability > 0.5
    assert (tmp_path / "sim" / "report.json").is_file()


def test_a_patch_with_hunks_at_the_wrong_lines_applies_as_the_harness_applies_it(tmp_path):
    """A diff made from a search/replace edit says its hunk starts at line 1 (as Agentless's do):
    ``git apply`` refuses it (a hunk at line 1 must match the file's start), the harness's ``patch
    --fuzz`` finds it further down. The view and the episode's script answer "applied" as the
    harness does, writing nothing; once the working tree is edited the script no longer tries it."""
    lines = [f"VALUE_{n} = {n}\n" for n in range(30)]
    tree, commit = make_git_tree(tmp_path / "tree", {"pkg/mod.py": "".join(lines)})
    task = Task(instance_id="local__lines-1", repo="local/lines", base_commit=commit, problem_statement="x",
                patch="", test_patch="", FAIL_TO_PASS=["t.py::t"], PASS_TO_PASS=[])
    misplaced = ("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,3 +1,3 @@\n VALUE_19 = 19\n-VALUE_20 = 20\n"
                 "+VALUE_20 = 21\n VALUE_21 = 21\n")
    escaping = misplaced.replace("pkg/mod.py", "../outside.py")
    executor, view = DirExecutor(tree, commit), TreeView(tree)
    assert executor.run("git apply --check - <<'EOF'\n" + misplaced + "EOF").exit_code != 0
    before = snapshot(tree)
    for patch, expected in ((misplaced, True), (escaping, False), (misplaced.replace("VALUE_19", "OTHER"), True),
                            (misplaced.replace("VALUE_2", "OTHER_"), False)):
        assert view.inspect_patch(task, patch, [], limit=1).applied is expected, patch
        assert inspect_patch(executor, task, patch, []).applied is expected, patch
    assert snapshot(tree) == before
    result = apply_patch(executor, misplaced, workdir=str(tree))
    assert (result.applied, result.method) == (True, "patch --fuzz")
    assert "VALUE_20 = 21\n" in (tree / "pkg/mod.py").read_text()
    assert inspect_patch(executor, task, misplaced, []).applied is False  # the tree is no longer the base
