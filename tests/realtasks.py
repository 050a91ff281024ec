"""Real instances for harness tests: real functions of more-itertools 10.5.0 (from PyPI) broken by
a commit, and the real tests of its own suite (plus one added by a test patch) that catch it.

Every commit is made deterministically (``commit_tree_changes``), so the ids are stable.
"""

from __future__ import annotations

import difflib
import subprocess

from sweworld.core.types import Task
from sweworld.repos import pypi_repo
from sweworld.repos.derive import derive_commit, derived_message

NAME, VERSION = "more-itertools", "10.5.0"
SOURCE = f"pypi:{NAME}=={VERSION}"
MODULE = "more_itertools/more.py"
TESTS = "tests/test_more.py"
FIRST_BUG = ("    if default is _marker:\n        raise ValueError(\n            'first() was called",
             "    if default is not _marker:\n        raise ValueError(\n            'first() was called")
ILEN_BUG = ("    return sum(compress(repeat(1), zip(iterable)))",
            "    return sum(compress(repeat(1), zip(iterable))) + 1")
FIRST_F2P = [f"{TESTS}::FirstTests::test_empty", f"{TESTS}::FirstTests::test_default"]
FIRST_P2P = [f"{TESTS}::FirstTests::test_many", f"{TESTS}::FirstTests::test_one", f"{TESTS}::LastTests::test_basic"]
ILEN_F2P = [f"{TESTS}::IlenTests::test_ilen"]
NEW_TEST = "tests/test_sweworld_first.py"
NEW_TEST_TEXT = ("from more_itertools import first\n\n\ndef test_first_of_empty_with_default():\n"
                 "    assert first([], 'x') == 'x'\n\n\ndef test_first_of_many():\n    assert first([5, 6]) == 5\n")


def git_show(mirror, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", str(mirror), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def unified(path: str, old: str, new: str) -> str:
    """A git-style patch turning ``old`` into ``new`` (``old=""`` creates the file)."""
    header = f"diff --git a/{path} b/{path}\n"
    if not old:
        header += "new file mode 100644\n"
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 "/dev/null" if not old else f"a/{path}", f"b/{path}")
    return header + "".join(lines)


def _break(text: str, *bugs: tuple[str, str]) -> str:
    for good, bad in bugs:
        assert text.count(good) == 1, good
        text = text.replace(good, bad)
    return text


def real_tasks() -> dict[str, Task]:
    """Three instances: one bug; two bugs (for PARTIAL); one bug whose test comes in a test patch."""
    mirror, release = pypi_repo(NAME, VERSION)
    original = git_show(mirror, release, MODULE)
    one_bug = _break(original, FIRST_BUG)
    two_bugs = _break(original, FIRST_BUG, ILEN_BUG)
    ids = {"first": "more-itertools__first-default", "two": "more-itertools__first-and-ilen",
           "test_patch": "more-itertools__first-new-test"}
    fix_one, fix_two = unified(MODULE, one_bug, original), unified(MODULE, two_bugs, original)
    first = derive_commit(mirror, release, fix_one, derived_message(ids["first"]))
    both = derive_commit(mirror, release, fix_two, derived_message(ids["two"]))
    first_new = derive_commit(mirror, release, fix_one, derived_message(ids["test_patch"]))
    common = {"repo": "more-itertools/more-itertools", "repo_source": SOURCE, "version": VERSION,
              "environment_setup_commit": release, "test_cmd": "pytest -rA"}
    return {
        "first": Task(instance_id=ids["first"], base_commit=first, patch=fix_one, FAIL_TO_PASS=FIRST_F2P, PASS_TO_PASS=FIRST_P2P,
                      problem_statement="first([], default) raises ValueError instead of returning the default.",
                      **common),
        "two": Task(instance_id=ids["two"], base_commit=both, patch=fix_two, FAIL_TO_PASS=FIRST_F2P + ILEN_F2P,
                    PASS_TO_PASS=FIRST_P2P, problem_statement="first() ignores its default; ilen() counts one too many.",
                    **common),
        "test_patch": Task(instance_id=ids["test_patch"], base_commit=first_new, patch=fix_one, test_patch=unified(NEW_TEST, "", NEW_TEST_TEXT),
                           FAIL_TO_PASS=[f"{NEW_TEST}::test_first_of_empty_with_default"],
                           PASS_TO_PASS=[f"{NEW_TEST}::test_first_of_many"],
                           problem_statement="first([], default) raises ValueError.", **common),
    }


def sources(task: Task) -> tuple[str, str]:
    """(buggy module text, fixed module text) of an instance."""
    mirror, release = pypi_repo(NAME, VERSION)
    return git_show(mirror, task.base_commit, MODULE), git_show(mirror, release, MODULE)
