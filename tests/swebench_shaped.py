"""A SWE-bench-shaped instance CI can build: ``psf/requests`` at version 2.31 (a repository and version
SWE-bench's own specs know, so code written for SWE-bench's images runs its spec: python 3.9, a
non-editable ``pip install .``, ``pytest -rA``), its code from the requests 2.31.0 source
distribution on PyPI, a real bug in ``utils.iter_slices`` and a test patch adding the tests that
catch it. Its id has SWE-bench's form, so the image name SWE-bench gives it
(``swebench/sweb.eval.x86_64.psf_1776_requests-90001:latest``) maps back to it.

``swebench_rows_file(dir)`` writes it as SWE-bench's Hugging Face rows are (``FAIL_TO_PASS`` and
``PASS_TO_PASS`` JSON-encoded), in a directory ``datasets.load_dataset`` reads as a ``test`` split,
with ``repo_source`` beside (sweworld's loader reads the same file).
"""

from __future__ import annotations

import json
from pathlib import Path

from realtasks import git_show, unified
from sweworld.core.types import Task
from sweworld.repos import pypi_repo
from sweworld.repos.derive import derive_commit, derived_message

INSTANCE_ID = "psf__requests-90001"
IMAGE = "swebench/sweb.eval.x86_64.psf_1776_requests-90001:latest"
MODULE = "requests/utils.py"
GOOD = "        yield string[pos : pos + slice_length]\n        pos += slice_length\n"
BAD = "        yield string[pos : pos + slice_length]\n        pos += slice_length + 1\n"
NEW_TEST = "tests/test_sweworld_slices.py"
NEW_TEST_TEXT = ('import pytest\n\nfrom requests.utils import iter_slices\n\n\n'
                 '@pytest.mark.parametrize("size", [1, 2, 3])\n'
                 'def test_slices_cover_the_string(size):\n'
                 '    assert "".join(iter_slices("abcdefg", size)) == "abcdefg"\n\n\n'
                 'def test_one_slice_without_a_length():\n'
                 '    assert list(iter_slices("abc", None)) == ["abc"]\n')


def requests_task() -> Task:
    mirror, release = pypi_repo("requests", "2.31.0")
    original = git_show(mirror, release, MODULE)
    assert original.count(GOOD) == 1
    fix = unified(MODULE, original.replace(GOOD, BAD), original)
    base = derive_commit(mirror, release, fix, derived_message(INSTANCE_ID))
    return Task(
        instance_id=INSTANCE_ID, repo="psf/requests", repo_source="pypi:requests==2.31.0", version="2.31",
        base_commit=base, environment_setup_commit=release, patch=fix,
        test_patch=unified(NEW_TEST, "", NEW_TEST_TEXT),
        problem_statement="requests.utils.iter_slices() skips a character between slices.",
        FAIL_TO_PASS=[f"{NEW_TEST}::test_slices_cover_the_string[{n}]" for n in (1, 2, 3)],
        PASS_TO_PASS=[f"{NEW_TEST}::test_one_slice_without_a_length"], created_at="2023-05-22T00:00:00Z")


def swebench_rows_file(directory: Path, task: Task) -> Path:
    """``directory/test.jsonl``: the task as a SWE-bench Hugging Face row (lists JSON-encoded)."""
    directory.mkdir(parents=True, exist_ok=True)
    row = task.model_dump(mode="json", exclude_none=True)
    row.update(FAIL_TO_PASS=json.dumps(task.FAIL_TO_PASS), PASS_TO_PASS=json.dumps(task.PASS_TO_PASS),
               hints_text=row.get("hints_text") or "")
    path = directory / "test.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path
