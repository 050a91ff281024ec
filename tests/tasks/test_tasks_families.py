"""Rows of the image-shipping families, in their published schemas (``tests/data/image_rows``), read as
tasks: which image, which base, which gold patch, which grade."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sweworld.envs.image import image_name
from sweworld.harness.grade import TestRun, expected_statuses, grade
from sweworld.tasks import validate_rows
from sweworld.tasks.families import reverse_patch

ROWS = Path(__file__).resolve().parents[1] / "data" / "image_rows"
BUG = ("diff --git a/pkg/mod.py b/pkg/mod.py\nindex 1111111..2222222 100644\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
       "@@ -1,3 +1,3 @@\n def f():\n-    return 1\n+    return 2\n \n"
       "diff --git a/pkg/new.py b/pkg/new.py\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n"
       "+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+--- not a header\n+x = 1\n")


def _rows(name: str, **values: str) -> list[dict]:
    text = (ROWS / name).read_text()
    for key, value in values.items():
        text = text.replace(f"<{key}>", json.dumps(value)[1:-1])
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_a_reversed_patch_undoes_the_patch_in_a_real_repository(tmp_path):
    repo = tmp_path / "r"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("def f():\n    return 1\n\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    subprocess.run([*git, "apply", "-"], input=BUG, text=True, check=True)
    assert (repo / "pkg" / "new.py").read_text() == "--- not a header\nx = 1\n"
    subprocess.run([*git, "apply", "-"], input=reverse_patch(BUG), text=True, check=True)
    assert not (repo / "pkg" / "new.py").exists()
    assert subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout == ""
    assert reverse_patch(reverse_patch(BUG)) == BUG


def test_a_swesmith_row_is_the_images_tree_with_its_bug_and_the_reverse_as_gold():
    [row] = _rows("swesmith.jsonl", patch=BUG, **{"base_commit:8": "1fd52536"})
    row["FAIL_TO_PASS"], row["PASS_TO_PASS"] = ["tests/test_a.py::test_x"], []
    [task] = validate_rows([row])
    extra = task.model_extra
    assert task.base_commit == "HEAD" and extra["bug_patch"] == BUG and task.patch == reverse_patch(BUG)
    assert image_name(task) == row["image_name"] and image_name(task, "recipe") is None


def test_an_r2egym_row_gets_an_id_and_is_graded_by_its_expected_statuses():
    expected = {"test_1.py::test_a": "PASSED", "test_1.py::test_b": "FAILED"}
    [row] = _rows("r2egym.jsonl", new_commit="c0ffee" * 6, base_commit="b" * 40)
    row["expected_output_json"] = json.dumps(expected)
    [task] = validate_rows([row])
    assert task.instance_id == "requests__r2e-c0ffeec0ffee" and task.base_commit == "HEAD"
    assert image_name(task) == row["docker_image"] and expected_statuses(task) == expected

    def run(output: str) -> bool:
        return grade(task, TestRun(test_output=output, exit_code=1, markers_found=True,
                                   test_patch_applied=True)).resolved
    assert run("PASSED test_1.py::test_a\nFAILED test_1.py::test_b - assert 1 == 2\n")
    assert not run("PASSED test_1.py::test_a\nPASSED test_1.py::test_b\n")  # expected to fail: must fail
    assert not run("PASSED test_1.py::test_a\nFAILED test_1.py::test_b\nPASSED test_1.py::test_c\n")  # one more


def test_swebench_v5_and_live_and_rebench_v2_rows_name_their_images():
    [v5] = validate_rows(_rows("swebench_verified_v5.jsonl", base_commit="a" * 40, patch="", test_patch=""))
    assert image_name(v5, "image") == "swebench/sweb.eval.x86_64.psf_1776_requests-90001:latest"
    v2 = validate_rows(_rows("rebench_v2.jsonl", base_commit="a" * 40, patch="", test_patch="",
                             **{"base_commit:7": "aaaaaaa"}))
    assert [image_name(t) for t in v2] == [None, v2[1].model_extra["image_name"], v2[2].model_extra["image_name"]]
    assert image_name(v2[0], "image") == v2[0].model_extra["image_name"]
