"""Which tests a test command runs, in the order the runner runs them.

The pool is every test the embedded SWT knows for the instance (recorded runs, FAIL_TO_PASS,
PASS_TO_PASS) plus the tests defined in the test files the command names (their text is in SWT's
context); a parametrized test known by its full ids is not added again without parameters.

pytest: each argument in turn selects the pool's ids equal to it, below it (``path::Class``), or
in it (a file or a directory); no argument selects the whole pool; ``-k`` then deselects. Within a
file, tests run in definition order. A ``.py`` argument whose file the context does not hold (it
does not exist in the workspace) is *missing*: pytest stops with exit code 4. So is a node id
naming a test of ``gone`` (``absent``: the test patch adds it, the workspace does not hold it):
pytest answers "not found"; ``gone`` tests are in no runner's pool.

sympy's bin/test: an argument selects the test files whose path holds it, run in sorted order,
``-k`` the tests whose name holds one of its words; a bare test name (as SWE-bench names sympy's
tests) is placed in the file whose text defines it, else in the one file the command names.

unittest and Django: labels are dotted (``pkg.tests.test_x.Class``) or paths; a label selects the
tests whose dotted name is it or below it. Selections hold the pool's ids (pytest ids or unittest
names, as the facts name them).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from sweworld.surrogates.swt.testcmd import TestRun, keyword_matches
from sweworld.surrogates.swt.testsource import base_id, definition_order, is_test_file, static_tests
from sweworld.surrogates.swt.unittestfmt import dotted, unittest_name


@dataclass
class Selection:
    tests: list[str] = field(default_factory=list)
    deselected: int = 0
    missing: list[str] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    """Node ids of tests the workspace does not hold (pytest: "ERROR: not found", exit code 4)."""
    static: set[str] = field(default_factory=set)
    """Selected tests known only from the test file's text."""


def pool(known: Sequence[str], texts: Mapping[str, str]) -> tuple[list[str], set[str]]:
    """(known tests + tests defined in the test files of ``texts``, the ids only the text gave)."""
    ids = dict.fromkeys(known)
    bases = {base_id(t) for t in ids}
    static = set()
    for path, text in texts.items():
        if is_test_file(path):
            for test_id in static_tests(path, text):
                if test_id not in bases:
                    ids[test_id] = None
                    static.add(test_id)
    return list(ids), static


def _ordered(ids: Sequence[str], texts: Mapping[str, str]) -> list[str]:
    """``ids`` grouped by file (first appearance) and in definition order within a file."""
    files = list(dict.fromkeys(t.split("::", 1)[0] for t in ids))
    orders = {f: definition_order(f, texts[f]) for f in files if f in texts}
    out = []
    for file in files:
        order = orders.get(file, {})
        mine = [t for t in ids if t.split("::", 1)[0] == file]
        out += sorted(mine, key=lambda t: order.get(base_id(t), len(order)))
    return out


def _below(test_id: str, target: str) -> bool:
    if "::" in target:
        return test_id == target or test_id.startswith((target + "::", target + "["))
    file = test_id.split("::", 1)[0]
    return not target or file == target or file.startswith(target.rstrip("/") + "/")


def select_pytest(run: TestRun, known: Sequence[str], texts: Mapping[str, str],
                  gone: Collection[str] = ()) -> Selection:
    ids, static = pool([t for t in known if "::" in t], texts)
    missing = [t for t in run.targets if t.split("::", 1)[0].endswith(".py") and t.split("::", 1)[0] not in texts]
    if missing:
        return Selection(missing=missing)
    not_found = [t for t in run.targets if "::" in t and (t in gone or base_id(t) in gone)]
    if not_found:
        return Selection(not_found=not_found)
    chosen: dict[str, None] = {}
    for target in run.targets or [""]:
        below = _ordered([t for t in ids if _below(t, target)], texts)
        if not below and "::" in target:  # a test the facts do not name: assume it exists
            below = [target]
            static.add(target)
        chosen.update(dict.fromkeys(below))
    tests = list(chosen)
    if run.keyword:
        kept = [t for t in tests if keyword_matches(run.keyword, t)]
        return Selection(kept, len(tests) - len(kept), static=static & set(kept))
    return Selection(tests, static=static & set(tests))


def select_unittest(run: TestRun, known: Sequence[str], texts: Mapping[str, str]) -> Selection:
    ids, static = pool(known, texts)
    names = {name: t for t in ids if (name := unittest_name(t)) is not None}
    labels = [t.removesuffix(".py").replace("/", ".") if "/" in t or t.endswith(".py") else t for t in run.targets]
    chosen = [t for n, t in names.items() if not labels or any(dotted(n) == lab or dotted(n).startswith(lab + ".")
                                                               for lab in labels)]
    return Selection(chosen, static=static & set(chosen))


def select_sympy(run: TestRun, known: Sequence[str], texts: Mapping[str, str]) -> Selection:
    ids, static = pool([t for t in known if "::" in t], texts)
    files = [t for t in run.targets if t.endswith(".py")]
    for name in (t for t in known if "::" not in t and " " not in t):
        defined = [t for t in ids if t.endswith("::" + name)]
        if not defined and len(files) == 1:
            ids.append(f"{files[0]}::{name}")
            static.add(ids[-1])
    chosen = [t for t in ids if not run.targets or any(arg in t.split("::", 1)[0] for arg in run.targets)]
    chosen = sorted(_ordered(chosen, texts), key=lambda t: t.split("::", 1)[0])
    if run.keyword:
        words = run.keyword.split(" or ")
        chosen = [t for t in chosen if any(w in t.rsplit("::", 1)[-1] for w in words)]
    return Selection(chosen, static=static & set(chosen))


def select(run: TestRun, known: Sequence[str], texts: Mapping[str, str], gone: Collection[str] = ()) -> Selection:
    """The tests ``run`` runs (see the module docstring); ``texts``: test files by repository path;
    ``gone``: known tests the workspace does not hold."""
    known = [t for t in known if t not in gone]
    if run.runner == "pytest":
        return select_pytest(run, known, texts, gone)
    if run.runner == "sympy":
        return select_sympy(run, known, texts)
    return select_unittest(run, known, texts)
