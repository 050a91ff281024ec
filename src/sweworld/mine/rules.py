"""Which steps of a history are candidate tasks, and why the others are not.

A candidate changes both non-test source and tests. Which paths are source, test, docs, vendored or
generated is the language's (``envs.lang``: ``PathRules``, detected once per repository); Python's
rule (``envs.lang.python``, the default) is the one for every layout seen in SWE-bench's and
SWE-Gym's repositories, JavaScript/TypeScript's is ``envs.lang.javascript``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sweworld.envs.lang.base import PathRules
from sweworld.envs.lang.python import PATHS as PYTHON_PATHS
from sweworld.envs.lang.python import is_doc_path, is_source_path, is_test_path
from sweworld.mine.history import Commit, FileChange

BRANCH_MERGE = re.compile(r"^Merge (remote-tracking )?branch '[^']+'( of \S+)?( into \S+)?$")
"""A merge of a whole branch (a maintenance branch forward-merged): its pull requests are steps of their own."""
REVERT = re.compile(r"^(revert\b|reverts\b)|^this reverts commit", re.I | re.M)
RELEASE = re.compile(r"^(release|releasing|bump(ed)? (the )?version|version bump|prepare(d)? (for )?(the )?release|"
                     r"v?\d+(\.\d+){1,3}([-.]?(rc|a|b|dev|post)\d*)?$)", re.I)

MAX_PATCH_LINES = 400
"""Default limit on the fix: lines added + removed in non-test files (SWE-bench Lite's largest gold
patches change about 100)."""
MAX_TEST_PATCH_LINES = 3000
"""Default limit on the test patch: lines added + removed in test files."""


@dataclass(frozen=True)
class Limits:
    """The size limits of a candidate."""

    max_patch_lines: int = MAX_PATCH_LINES
    max_test_patch_lines: int = MAX_TEST_PATCH_LINES


__all__ = ["PYTHON_PATHS", "Limits", "PathRules", "is_doc_path", "is_source_path", "is_test_path", "skip_reason"]
"""Python's path functions stay importable from here (they were here before languages)."""


def _all(files: Iterable[FileChange], pattern) -> bool:
    files = list(files)
    return bool(files) and all(pattern(f.path) for f in files)


def skip_reason(commit: Commit, limits: Limits = Limits(), rules: PathRules = PYTHON_PATHS) -> str | None:
    """Why ``commit`` is not a candidate (a key of the summary's drop table), or None; ``rules``: the
    repository's language's paths."""
    if commit.first_parent is None:
        return "root commit"
    if REVERT.search(commit.message):
        return "revert"
    if RELEASE.match(commit.subject.strip()):
        return "release"
    if commit.is_merge and BRANCH_MERGE.match(commit.subject.strip()):
        return "branch merge"
    tests = [f for f in commit.files if rules.is_test(f.path)]
    others = [f for f in commit.files if not rules.is_test(f.path)]
    sources = [f for f in others if rules.is_source(f.path)]
    if not sources:
        if not others:
            return "tests only"
        return "docs only" if _all(others, rules.is_doc) else "no source change"
    if not tests:
        return "no test change"
    if _all(sources, rules.is_vendored):
        return "vendored"
    if _all(sources, rules.is_generated):
        return "generated"
    if any(f.binary for f in commit.files):
        return "binary files"
    if sum(f.lines for f in others) > limits.max_patch_lines:
        return f"patch over {limits.max_patch_lines} lines"
    if sum(f.lines for f in tests) > limits.max_test_patch_lines:
        return f"test patch over {limits.max_test_patch_lines} lines"
    return None
