"""A plain unified diff (``---``/``+++`` headers, no ``diff --git``: ``diff -u`` and the diffs tools
make from search/replace edits) is read as the git diff of the same change is: its files, changed
lines and change signature, its scratch files, and the SWR's features of it."""

from __future__ import annotations

import re

from tests.conftest import make_git_tree

from realtasks import unified
from sweworld.core.types import Task
from sweworld.surrogates.swr.features import features
from sweworld.surrogates.swr.patched import tree_source
from sweworld.surrogates.swt.affected import change_signature, changed_lines, file_sections, without_scratch


def plain(diff: str) -> str:
    """``diff`` without git's header lines, as ``diff -u`` writes it."""
    return "".join(line for line in diff.splitlines(keepends=True)
                   if not line.startswith(("diff --git ", "index ", "new file mode ", "deleted file mode ")))


GIT = """diff --git a/pkg/mod.py b/pkg/mod.py
index 1111111..2222222 100644
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -3,3 +3,3 @@ def f():
     a = 1
--- removed text that starts with two dashes
+++ added text that starts with two pluses
     b = 2
@@ -10,2 +10,3 @@ def g():
     return 1
+    # more
diff --git a/reproduce.py b/reproduce.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/reproduce.py
@@ -0,0 +1 @@
+print(1)
diff --git a/old.py b/old.py
deleted file mode 100644
index 4444444..0000000
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-x = 1
"""


def test_a_plain_diff_has_the_files_lines_and_signature_of_the_git_diff():
    bare = plain(GIT)
    assert "diff --git" not in bare
    assert [p for p, _ in file_sections(bare)] == [p for p, _ in file_sections(GIT)] == ["pkg/mod.py", "reproduce.py", "old.py"]
    assert changed_lines(bare) == changed_lines(GIT) == {"pkg/mod.py": {4, 5, 10, 11}, "reproduce.py": set(), "old.py": {1}}
    signature = change_signature(GIT)
    assert change_signature(bare) == signature
    assert signature["pkg/mod.py"] == ["--- removed text that starts with two dashes",
                                       "+++ added text that starts with two pluses", "+    # more"]
    assert [p for p, _ in file_sections(without_scratch(bare))] == ["pkg/mod.py", "old.py"]
    assert "".join(t for _, t in file_sections(bare)) == bare  # sections split, nothing lost


def test_the_swr_reads_a_plain_diff_with_hunks_at_the_wrong_lines_as_the_git_diff(tmp_path):
    """The SWR's features of an agent's patch written as a plain diff whose hunk says line 1 and
    replaces the whole block around the line it changes (as Agentless's do) are those of the git
    diff of the same change; an indentation-only change is still a change."""
    lines = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(12))
    tree, commit = make_git_tree(tmp_path / "tree", {"pkg/mod.py": lines, "tests/test_mod.py": "from pkg.mod import f7\n"})
    fixed = lines.replace("return x + 7", "return x - 7")
    gold = unified("pkg/mod.py", lines, fixed)
    task = Task(instance_id="local__mod-1", repo="local/mod", base_commit=commit, problem_statement="f7 adds",
                patch=gold, test_patch="", FAIL_TO_PASS=["tests/test_mod.py::test_f7"], PASS_TO_PASS=[])
    misplaced = re.sub(r"^@@ -\d+(,\d+) \+\d+(,\d+) @@", r"@@ -1\1 +1\2 @@", plain(gold), flags=re.M)
    assert "diff --git" not in misplaced and "@@ -1," in misplaced
    block = ("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,3 +1,3 @@\n-def f7(x):\n-    return x + 7\n-\n"
             "+def f7(x):\n+    return x - 7\n+\n")
    read = tree_source(tree)
    expected = features(task, gold, read)
    for patch in (misplaced, block):
        got = features(task, patch, read)
        assert got == expected, patch
        assert (got["applies"], got["tokens_jaccard"], got["gold_added_recall"], got["modules_equal"]) == (1, 1, 1, 1)
    dedented = block.replace("+    return x - 7", "+  return x + 7")
    assert features(task, dedented, read)["agent_added_precision"] < 1.0
