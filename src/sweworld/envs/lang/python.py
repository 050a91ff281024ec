"""Python: the path rules mining has always used, and detection by the project files.

The path rule (one for every layout seen in SWE-bench's and SWE-Gym's repositories):

- a test path has a directory that starts with ``test`` (``tests/``, ``test/``, ``testing/``,
  ``testutils/``) or is ``e2e``, or a file name ``test_*.py``, ``*_test.py``, ``*_tests.py``,
  ``tests.py``, ``conftest.py``; everything under a test directory (data files included) is test;
- a docs path is under ``doc/``, ``docs/``, ``changelog.d/`` or ``changes/``, or a text file
  (``.rst``, ``.md``, ``.txt``, ``.adoc``) outside the package, or a change log, news or authors file;
- a source path is a Python file (``.py``, ``.pyi``, ``.pyx``, ``.pxd``) that is neither.

SWE-bench's own split (``swebench.collect``) puts every path containing ``test`` into the test patch;
the rule above agrees on the layouts measured (docs/benchmarks.md) and does not take ``pytest.py``
or ``contest.py`` for tests.

The environment of a Python repository is inferred by ``mine.recipes`` (it needs the interpreters
found here) and built by ``envs.scripts``' virtualenv stages: ``infer`` and the stage hooks are None.
"""

from __future__ import annotations

import re
from pathlib import Path

from sweworld.envs.lang.base import Language, PathRules, parts, under

SOURCE_SUFFIXES = (".py", ".pyi", ".pyx", ".pxd")
DOC_DIRS = frozenset({"doc", "docs", "changelog.d", "changes", "newsfragments"})
DOC_SUFFIXES = (".rst", ".md", ".txt", ".adoc")
DOC_NAMES = re.compile(r"^(changes|changelog|history|news|authors|contributors|release[-_]?notes)\b", re.I)
VENDOR_DIRS = frozenset({"vendor", "_vendor", "vendored", "third_party", "thirdparty", "extern", "externals"})
GENERATED = re.compile(r"(_pb2(_grpc)?\.pyi?|(^|/)parsetab\.py|(^|/)lextab\.py|(^|/)_version\.py)$|(^|/)generated/")
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
"""A tree with one of these at its root is a Python project (whatever else it holds)."""


def is_test_path(path: str) -> bool:
    names = parts(path)
    if not names:
        return False
    name = names[-1]
    if any(p.lower().startswith("test") or p.lower() == "e2e" for p in names[:-1]):
        return True
    return (name.startswith("test_") and name.endswith(SOURCE_SUFFIXES)) or name in {"conftest.py", "tests.py"} \
        or name.endswith(("_test.py", "_tests.py"))


def is_doc_path(path: str) -> bool:
    names = parts(path)
    if not names:
        return False
    name = names[-1]
    if under(path, DOC_DIRS) or DOC_NAMES.match(name):
        return True
    return name.lower().endswith(DOC_SUFFIXES) and len(names) == 1


def is_source_path(path: str) -> bool:
    return path.endswith(SOURCE_SUFFIXES) and not is_test_path(path) and not is_doc_path(path)


def is_vendored(path: str) -> bool:
    return under(path, VENDOR_DIRS)


def is_generated(path: str) -> bool:
    return bool(GENERATED.search(path))


def detect(tree: Path) -> bool:
    return any((tree / name).is_file() for name in PROJECT_FILES)


PATHS = PathRules(is_test=is_test_path, is_doc=is_doc_path, is_source=is_source_path, is_vendored=is_vendored,
                  is_generated=is_generated)
PYTHON = Language(name="python", paths=PATHS, detect=detect)
