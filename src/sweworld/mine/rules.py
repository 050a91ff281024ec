"""Which steps of a history are candidate tasks, and why the others are not.

A candidate changes both non-test source and tests. The path rule (one for every layout seen in
SWE-bench's and SWE-Gym's repositories):

- a test path has a directory that starts with ``test`` (``tests/``, ``test/``, ``testing/``,
  ``testutils/``) or is ``e2e``, or a file name ``test_*.py``, ``*_test.py``, ``*_tests.py``,
  ``tests.py``, ``conftest.py``; everything under a test directory (data files included) is test;
- a docs path is under ``doc/``, ``docs/``, ``changelog.d/`` or ``changes/``, or a text file
  (``.rst``, ``.md``, ``.txt``, ``.adoc``) outside the package, or a change log, news or authors file;
- a source path is a Python file (``.py``, ``.pyi``, ``.pyx``, ``.pxd``) that is neither.

SWE-bench's own split (``swebench.collect``) puts every path containing ``test`` into the test patch;
the rule above agrees on the layouts measured (docs/benchmarks.md) and does not take ``pytest.py``
or ``contest.py`` for tests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from sweworld.mine.history import Commit, FileChange

SOURCE_SUFFIXES = (".py", ".pyi", ".pyx", ".pxd")
DOC_DIRS = frozenset({"doc", "docs", "changelog.d", "changes", "newsfragments"})
DOC_SUFFIXES = (".rst", ".md", ".txt", ".adoc")
DOC_NAMES = re.compile(r"^(changes|changelog|history|news|authors|contributors|release[-_]?notes)\b", re.I)
VENDOR_DIRS = frozenset({"vendor", "_vendor", "vendored", "third_party", "thirdparty", "extern", "externals"})
GENERATED = re.compile(r"(_pb2(_grpc)?\.pyi?|(^|/)parsetab\.py|(^|/)lextab\.py|(^|/)_version\.py)$|(^|/)generated/")
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


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    name = parts[-1]
    if any(p.lower().startswith("test") or p.lower() == "e2e" for p in parts[:-1]):
        return True
    return (name.startswith("test_") and name.endswith(SOURCE_SUFFIXES)) or name in {"conftest.py", "tests.py"} \
        or name.endswith(("_test.py", "_tests.py"))


def is_doc_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    name = parts[-1]
    if any(p.lower() in DOC_DIRS for p in parts[:-1]) or DOC_NAMES.match(name):
        return True
    return name.lower().endswith(DOC_SUFFIXES) and len(parts) == 1


def is_source_path(path: str) -> bool:
    return path.endswith(SOURCE_SUFFIXES) and not is_test_path(path) and not is_doc_path(path)


def _all(files: Iterable[FileChange], pattern) -> bool:
    files = list(files)
    return bool(files) and all(pattern(f.path) for f in files)


def _vendored(path: str) -> bool:
    return any(p.lower() in VENDOR_DIRS for p in PurePosixPath(path).parts[:-1])


def skip_reason(commit: Commit, limits: Limits = Limits()) -> str | None:
    """Why ``commit`` is not a candidate (a key of the summary's drop table), or None."""
    if commit.first_parent is None:
        return "root commit"
    if REVERT.search(commit.message):
        return "revert"
    if RELEASE.match(commit.subject.strip()):
        return "release"
    if commit.is_merge and BRANCH_MERGE.match(commit.subject.strip()):
        return "branch merge"
    tests = [f for f in commit.files if is_test_path(f.path)]
    others = [f for f in commit.files if not is_test_path(f.path)]
    sources = [f for f in others if is_source_path(f.path)]
    if not sources:
        if not others:
            return "tests only"
        return "docs only" if _all(others, is_doc_path) else "no source change"
    if not tests:
        return "no test change"
    if _all(sources, _vendored):
        return "vendored"
    if _all(sources, lambda p: bool(GENERATED.search(p))):
        return "generated"
    if any(f.binary for f in commit.files):
        return "binary files"
    if sum(f.lines for f in others) > limits.max_patch_lines:
        return f"patch over {limits.max_patch_lines} lines"
    if sum(f.lines for f in tests) > limits.max_test_patch_lines:
        return f"test patch over {limits.max_test_patch_lines} lines"
    return None
