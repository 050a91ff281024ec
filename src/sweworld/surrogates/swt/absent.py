"""Tests the task's test patch adds that the workspace does not hold.

In an episode the test patch is not applied (the harness applies it at evaluation only), so a
FAIL_TO_PASS test it adds does not exist in the workspace: pytest answers a node id naming it with
"not found" (exit code 4, no test run), a run of its file or directory does not collect it, and a
reproduction script that runs it fails.

``absent(tests, task, diff)``: those of ``tests`` whose function the task's test patch defines on an
added line of its file, and neither removes there (a rewritten test exists already) nor does the
workspace's ``diff`` add there (the agent wrote it). Read per file section (``affected.file_sections``),
so a diff cut short by the context's bound is still read as far as it goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sweworld.surrogates.swt.affected import file_sections
from sweworld.surrogates.swt.testsource import base_id

_DEF = re.compile(r"^([+-])\s*(?:async\s+)?def\s+(\w+)\s*\(", re.M)


@lru_cache(maxsize=256)
def defined(diff: str) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """((path, function) that ``diff``'s added lines define, (path, function) its removed lines do)."""
    added, removed = set(), set()
    for path, text in file_sections(diff):
        for sign, name in _DEF.findall(text):
            (added if sign == "+" else removed).add((path, name))
    return frozenset(added), frozenset(removed)


def _key(test_id: str) -> tuple[str, str]:
    path, _, rest = base_id(test_id).partition("::")
    return path, rest.rsplit("::", 1)[-1]


def absent(tests: Iterable[str], task: dict[str, Any], diff: str) -> set[str]:
    """See the module docstring."""
    added, removed = defined(task.get("test_patch") or "")
    new = added - removed
    if not new:
        return set()
    written = defined(diff)[0] if diff else frozenset()
    return {t for t in tests if "::" in t and _key(t) in new and _key(t) not in written}
