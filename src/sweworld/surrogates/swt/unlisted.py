"""What the task's test lists say of the tests they leave out.

SWE-bench's harness (and ``sweworld mine``'s validation) runs the test files the test patch touches,
before and after the gold patch, and lists as PASS_TO_PASS every test that passed both times and as
FAIL_TO_PASS those the fix made pass. A test such a file defines at the base commit that is in
neither list therefore did not pass in the reference environment: it failed there (a dependency of
another version, no network, a warning turned into an error), or it was skipped or marked to fail.

``unlisted(tests, task, diff, texts)``: test id -> the status it is predicted to have ("SKIPPED" or
"XFAIL" where its text marks it so, ``testsource.marked``, else "FAILED") for those of ``tests``
that a file of the test patch defines in the workspace's text (``texts``), whose function no listed
id names (parameters aside), that the workspace's ``diff`` does not add (the agent wrote it) and
that the test patch does not remove (a test it renames or deletes is not in the lists for that
reason). Only files with a listed pytest id are read: lists in another runner's naming (unittest,
Django, sympy's bare names) say nothing of pytest ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sweworld.surrogates.swt.absent import defined, key_of
from sweworld.surrogates.swt.affected import file_sections
from sweworld.surrogates.swt.testsource import base_id, marked, static_tests


def unlisted(tests: Iterable[str], task: dict[str, Any], diff: str, texts: Mapping[str, str]) -> dict[str, str]:
    """See the module docstring."""
    patch = task.get("test_patch") or ""
    listed = {base_id(t) for k in ("FAIL_TO_PASS", "PASS_TO_PASS") for t in task.get(k) or [] if "::" in t}
    files = {path for path, _ in file_sections(patch) if path} & {t.split("::", 1)[0] for t in listed}
    if not files:
        return {}
    added, removed = defined(patch)
    dropped = removed - added
    written = defined(diff)[0] if diff else frozenset()
    out = {}
    for test in tests:
        path = test.split("::", 1)[0]
        if path not in files or path not in texts or base_id(test) in listed:
            continue
        if key_of(test) in written or key_of(test) in dropped or base_id(test) not in static_tests(path, texts[path]):
            continue
        out[test] = marked(texts[path], test) or "FAILED"
    return out
