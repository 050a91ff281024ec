"""What the task's test patch says of the tests in a workspace, where it is not applied.

In an episode the test patch is not applied (the harness applies it at evaluation only), so a
FAIL_TO_PASS test it adds does not exist in the workspace: pytest answers a node id naming it with
"not found" (exit code 4, no test run), a run of its file or directory does not collect it, and a
reproduction script that runs it fails. A FAIL_TO_PASS test it rewrites runs in its old version,
which passed at the base commit as the other tests there did.

``absent(tests, task, diff)``: those of ``tests`` whose function the task's test patch defines on an
added line of its file, and neither removes there (a rewritten test exists already) nor does the
workspace's ``diff`` add there (the agent wrote it), nor does the workspace's text of the file
define (when the caller has it). Read per file section (``affected.file_sections``),
so a diff cut short by the context's bound is still read as far as it goes.

``rewritten(tests, task, texts)``: those of ``tests`` whose source the test patch changes: the
function is in the workspace's text of its file (``texts``) and differs once the patch is applied to
that text (``swr.patched.apply_patch_text``), or, where that cannot be told (no text, a text cut
short, a patch that does not apply to it), a line the patch adds or removes lies in the body of a
function whose ``def`` line the hunk shows or its header names (git's function context).

``absent`` also holds the FAIL_TO_PASS cases of a parametrized test that the test patch adds to its
parameters: the function is in the workspace's text, its body the same once the patch is applied and
its decorators not (``new_cases``). A case that existed before, with the same body, passed at the
base and would be PASS_TO_PASS; so a FAIL_TO_PASS case of it is one the patch adds, and pytest
answers its id with "not found".

``whole_file_failed(tests, task)``: those of ``tests`` that are FAIL_TO_PASS in a file whose every
listed test is FAIL_TO_PASS (at least ``WHOLE_FILE`` of them): before the fix the whole run of the
file failed, an import or a collection error the test patch brings (a name only the fix defines,
imported by the patched file or by a test file it adds beside it), not each test; in the workspace
the old files run, and these tests with them, as at the base.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from sweworld.surrogates.swt.affected import file_sections
from sweworld.surrogates.swt.testsource import base_id, decorators, static_tests, test_source

_HUNK_DEF = re.compile(r"^@@ [^@]* @@[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
_LINE_DEF = re.compile(r"^[ +-]([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(")
"""A diff line (context, added or removed) with a ``def``: (its indentation, the name)."""


@lru_cache(maxsize=256)
def defined(diff: str) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """((path, function) that ``diff``'s added lines define, (path, function) its removed lines do)."""
    added, removed = set(), set()
    for path, text in file_sections(diff):
        for line in text.splitlines():
            if line[:1] in "+-" and not line.startswith(("+++", "---")) and (m := _LINE_DEF.match(line)):
                (added if line[0] == "+" else removed).add((path, m[2]))
    return frozenset(added), frozenset(removed)


def key_of(test_id: str) -> tuple[str, str]:
    path, _, rest = base_id(test_id).partition("::")
    return path, rest.rsplit("::", 1)[-1]


def absent(tests: Iterable[str], task: dict[str, Any], diff: str, texts: Mapping[str, str] | None = None) -> set[str]:
    """See the module docstring; ``texts``: files of the workspace by path (a test its file's text
    defines is there, whatever the patches say)."""
    tests = list(tests)
    texts = texts or {}
    added, removed = defined(task.get("test_patch") or "")
    new = added - removed
    cases = new_cases(tests, task, texts)
    if not new:
        return cases
    written = defined(diff)[0] if diff else frozenset()

    def there(test_id: str) -> bool:
        path, name = key_of(test_id)
        return path in texts and any(t.rsplit("::", 1)[-1] == name for t in static_tests(path, texts[path]))

    return cases | {t for t in tests if "::" in t and key_of(t) in new and key_of(t) not in written and not there(t)}


def new_cases(tests: Iterable[str], task: dict[str, Any], texts: Mapping[str, str]) -> set[str]:
    """See the module docstring."""
    patch = task.get("test_patch") or ""
    failing = {t for t in task.get("FAIL_TO_PASS") or [] if "::" in t and "[" in t}
    chosen = [t for t in tests if t in failing and t.split("::", 1)[0] in texts]
    if not patch or not chosen:
        return set()
    after = _patched(patch, tuple(sorted((p, texts[p]) for p in {t.split("::", 1)[0] for t in chosen})))
    out = set()
    for test in chosen:
        path = test.split("::", 1)[0]
        old, new = texts[path], after.get(path)
        if new and test_source(old, test) is not None and test_source(old, test) == test_source(new, test) \
                and decorators(old, test) != decorators(new, test):
            out.add(test)
    return out


@lru_cache(maxsize=64)
def _patched(patch: str, files: tuple[tuple[str, str], ...]) -> dict[str, str | None]:
    from sweworld.surrogates.swr.patched import apply_patch_text  # the swr package imports this one's

    texts = dict(files)
    got = apply_patch_text(patch, texts.get)
    return {path: got.after.get(path) for path in texts} if got.applied else {}


@lru_cache(maxsize=256)
def changed_bodies(patch: str) -> frozenset[tuple[str, str]]:
    """(path, function) whose body a line ``patch`` adds or removes lies in, as far as its hunks
    show the function (its ``def`` line in the hunk, or named by the hunk header); a function the
    patch adds is not among them."""
    out = set()
    for path, text in file_sections(patch):
        current: tuple[str, int] | None = None
        for line in text.splitlines():
            if line.startswith(("+++", "---")):
                continue
            if line.startswith("@@"):
                current = (m[1], 0) if (m := _HUNK_DEF.match(line)) else None
                continue
            if (m := _LINE_DEF.match(line)) is not None:
                current = None if line[0] == "+" else (m[2], len(m[1]))
                continue
            body = line[1:]
            if current and body.strip() and len(body) - len(body.lstrip()) <= current[1]:
                current = None  # dedented: the function ended
            if current and line[:1] in "+-" and body.strip():
                out.add((path, current[0]))
    return frozenset(out)


def rewritten(tests: Iterable[str], task: dict[str, Any], texts: Mapping[str, str]) -> set[str]:
    """See the module docstring."""
    patch = task.get("test_patch") or ""
    tests = [t for t in tests if "::" in t]
    if not patch or not tests:
        return set()
    known = [t for t in tests if t.split("::", 1)[0] in texts]
    after = _patched(patch, tuple(sorted((p, texts[p]) for p in {t.split("::", 1)[0] for t in known})))
    out = set()
    for test in tests:
        path = test.split("::", 1)[0]
        old = test_source(texts[path], test) if path in texts else None
        new = test_source(after[path], test) if after.get(path) else None
        if old is not None and new is not None:
            if old != new:
                out.add(test)
        elif key_of(test) in changed_bodies(patch):
            out.add(test)
    return out


WHOLE_FILE = 3


def whole_file_failed(tests: Iterable[str], task: dict[str, Any]) -> set[str]:
    """See the module docstring."""
    failing = [t for t in task.get("FAIL_TO_PASS") or [] if "::" in t]
    passing = {t.split("::", 1)[0] for t in task.get("PASS_TO_PASS") or [] if "::" in t}
    files = {f for f, n in Counter(t.split("::", 1)[0] for t in failing).items() if n >= WHOLE_FILE and f not in passing}
    chosen = set(failing)
    return {t for t in tests if t in chosen and t.split("::", 1)[0] in files}
