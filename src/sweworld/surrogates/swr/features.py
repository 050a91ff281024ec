"""Features of an agent's patch that need no environment: the patch against the gold patch, on the
base files read through a ``FileSource`` (``patched``).

- size: files, hunks, lines added/removed, new files, whether test files changed, empty patch;
- validity: the patch parses and applies to the base files; every patched Python file parses;
- text: Jaccard of the touched files, of the changed lines (sign + stripped text) and of their
  tokens; lines by which the patched files differ from the gold-patched ones; the share of the gold
  patch's added and removed tokens (and of the string literals it adds) the agent's patch has, and
  the share of the agent's added tokens the gold patch has;
- code (AST, positions and comments ignored): patched modules equal to the gold-patched ones; for
  each function the gold patch changes (a synthesized instance's gold patch IS the revert of the
  injected bug): equal to the gold-patched function, token similarity of the two, left as in the
  base (bug kept); functions touched vs functions the gold patch touches (Jaccard, extra ones);
- tests: extra functions the FAIL_TO_PASS/PASS_TO_PASS tests run (per-test ``coverage`` on the task
  row where it exists, else their names appear in the FAIL_TO_PASS test files), touched functions
  named in those files; the share of the functions the agent's (and the gold) patch changes that
  the FAIL_TO_PASS tests reach by a static call graph over names (``reach``), and whether any is;
- executable: the patch changes code (not only comments, docs or tests);
- behaviour (``behaviour``): the calls with literal arguments that the FAIL_TO_PASS tests make to
  functions of the touched modules, made on the base, gold and agent versions of those modules
  (standard library and the repository's own modules only, in one sandboxed process): some call
  computed on both the gold and the agent version, the share of those where the agent's result is
  the gold's, and on the calls where the gold differs from the base, the shares where the agent
  matches the gold (a fix) and the base (none). Unknown (a name the standard library cannot serve,
  a time limit) is never a difference. Computed, not weighed by the shipped models (too few real
  patches get one: docs/benchmarks.md).

Python files are compared whole (a file that does not parse after the agent's patch is a syntax
error wherever the error is); the base and gold-patched versions are parsed once per task.
``FEATURES`` fixes the order; ``features(task, patch, read)`` -> {name: float}.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from sweworld.core.types import Task
from sweworld.surrogates.swr.behaviour import FEATURES as BEHAVIOUR
from sweworld.surrogates.swr.behaviour import behaviour
from sweworld.surrogates.swr.patched import FileSource, Patched, apply_patch_text, split_lines
from sweworld.surrogates.swr.reach import reached, test_names
from sweworld.surrogates.swr.splice import spliced
from sweworld.surrogates.swr.syntax import (
    MODULE,
    Module,
    common_ends,
    module,
    same,
    similarity,
    tokens,
)
from sweworld.surrogates.swt.affected import change_signature, without_scratch
from sweworld.surrogates.swt.structured import coverage_of
from sweworld.surrogates.swt.testsource import is_test_file

FEATURES = (
    "empty", "parsed", "applies", "syntax_ok", "files", "hunks", "added", "removed", "new_files",
    "tests_modified", "files_jaccard", "lines_jaccard", "tokens_jaccard", "lines_off_gold",
    "modules_equal", "gold_funcs_equal", "gold_funcs_all_equal", "gold_funcs_similarity", "gold_funcs_unchanged",
    "funcs_jaccard", "extra_funcs", "extra_funcs_tested", "funcs_named_in_tests", "executable",
    "agent_reached", "agent_reached_any", "gold_reached",
    "gold_added_recall", "gold_removed_recall", "agent_added_precision", "gold_strings_recall",
    *BEHAVIOUR,
)
_HUNK = re.compile(r"^@@ ", re.M)
_GOLD_CACHE: dict[tuple[str, str, int], Patched] = {}
_REACH_CACHE: dict[tuple, dict[str, set[str]]] = {}
Funcs = dict[str, set[str]]
"""Path -> qualified names of functions (``MODULE``: outside any function)."""


@dataclass
class View:
    """One Python file in three versions (base, gold-patched, agent-patched), on the same lines."""

    base: Module
    gold: Module
    agent: Module

    def changed(self, which: Module) -> set[str]:
        return {n for n in self.base.nodes.keys() | which.nodes.keys() if not same(self.base, which, n)}


def _jaccard(a: Iterable, b: Iterable) -> float:
    a, b = Counter(a), Counter(b)
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 1.0


def _recall(need: Iterable, have: Iterable) -> float:
    """Share of ``need`` (a multiset) found in ``have`` (1.0 when nothing is needed)."""
    need, have = Counter(need), Counter(have)
    total = sum(need.values())
    return sum((need & have).values()) / total if total else 1.0


_STRING = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""")


def _asymmetric(agent: list[str], gold: list[str]) -> dict[str, float]:
    """How much of the gold patch's change the agent's holds, and how much of the agent's is the
    gold's, on tokens of the added and of the removed lines (sign + text), and on the string
    literals the gold patch adds."""
    side = lambda lines, sign: [t for line in lines if line[0] == sign for t in tokens(line[1:])]  # noqa: E731
    literals = lambda lines, sign: {m[1] for line in lines if line[0] == sign for m in _STRING.findall(line)}  # noqa: E731
    new_strings = literals(gold, "+") - literals(gold, "-")
    return {"gold_added_recall": _recall(side(gold, "+"), side(agent, "+")),
            "gold_removed_recall": _recall(side(gold, "-"), side(agent, "-")),
            "agent_added_precision": _recall(side(agent, "+"), side(gold, "+")),
            "gold_strings_recall": _recall(new_strings, literals(agent, "+"))}


def _log(n: float) -> float:
    return math.log1p(max(n, 0))


def _gold(task: Task, read: FileSource) -> Patched:
    key = (task.instance_id, task.base_commit, hash(task.patch))
    if key not in _GOLD_CACHE:
        if len(_GOLD_CACHE) > 256:
            _GOLD_CACHE.clear()
        _GOLD_CACHE[key] = apply_patch_text(task.patch, read)
    return _GOLD_CACHE[key]


def _view(path: str, gold: Patched, agent: Patched, read: FileSource) -> View:
    """The file whole in its three versions: a version a patch leaves alone is the base. The base is
    parsed once per task (``syntax.module`` caches by text); the gold's and the agent's versions are
    the base with the statements they change parsed alone (``splice.spliced``), so a further patch
    of a task costs the parse of what it changes."""
    base = (gold.base[path] if path in gold.base else agent.base.get(path, read(path))) or ""
    parsed = module(base)
    side = lambda p: spliced(parsed, (p.after.get(path) or "") if path in p.after else base)  # noqa: E731
    return View(parsed, side(gold), side(agent))


def _present(agent: Patched, path: str) -> bool:
    """``path`` exists after the agent's patch: patched by it, or left as in the base (a file only
    the gold patch changes is compared too: the agent's version of it is the base)."""
    return agent.after.get(path) is not None or path not in agent.after


def _off(a: str | None, b: str | None) -> int:
    """Lines (stripped, blank ones left out) that a diff of the two texts removes or adds."""
    if a == b:
        return 0
    x, y = _trimmed(*([line.strip() for line in (t or "").splitlines() if line.strip()] for t in (a, b)))
    return sum(i2 - i1 + j2 - j1 for tag, i1, i2, j1, j2 in
               difflib.SequenceMatcher(a=x, b=y, autojunk=False).get_opcodes() if tag != "equal")


def _trimmed(x: list[str], y: list[str]) -> tuple[list[str], list[str]]:
    """``x`` and ``y`` without the lines they begin and end with in common: two versions of one file
    differ around the patched places only, and difflib on the whole of a 3,000-line module costs more
    than the rest of the features together."""
    start, end = common_ends(x, y)
    return x[start:len(x) - end], y[start:len(y) - end]


def _signature(patched: Patched, diff: str) -> list[str]:
    """The lines the patch removes and adds (sign + stripped text), in order, as its diff says them;
    where the diff removes and adds the very same line (it replaces a whole block to change part of
    it, as diffs made from search/replace edits do), from the files it produces instead (difflib
    between each base and patched text, indentation kept), so that its signature is that of the
    change it makes."""
    said = [line.rstrip() for lines in change_signature(diff).values() for line in lines]
    sides = [Counter(line[1:] for line in said if line[0] == sign and line[1:].strip()) for sign in "-+"]
    if patched.applied and sides[0] & sides[1]:
        said = []
        for path in patched.paths:
            x, y = _trimmed(*([line.rstrip() for line in split_lines(t)] if t is not None else []
                              for t in (patched.base.get(path), patched.after[path])))
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=x, b=y, autojunk=False).get_opcodes():
                if tag != "equal":
                    said += ["-" + line for line in x[i1:i2]] + ["+" + line for line in y[j1:j2]]
    return [line[0] + line[1:].strip() for line in said]


@lru_cache(maxsize=128)
def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text))


def _named(task: Task, funcs: Funcs, read: FileSource) -> float:
    """Share of ``funcs`` whose name appears in the FAIL_TO_PASS test files (after the test patch)."""
    pairs = [(path, name) for path, names in funcs.items() for name in names if name != MODULE]
    if not pairs:
        return 0.0
    tests = _tests_patched(task, read)
    files = sorted({t.split("::", 1)[0] for t in task.FAIL_TO_PASS})
    words = _words("\n".join(tests.after.get(f) or read(f) or "" for f in files))
    return sum(name.rsplit(".", 1)[-1] in words for _, name in pairs) / len(pairs)


def _reach(task: Task, gold: Patched, funcs: Funcs, read: FileSource) -> tuple[float, float]:
    """(share of ``funcs`` the FAIL_TO_PASS tests reach, whether any is), by the call graph of the
    files as the gold patch leaves them (``reach``; computed once per task and set of files, so the
    agent's own texts are not parsed whole)."""
    pairs = [(path, name) for path, names in funcs.items() for name in names if name != MODULE]
    if not pairs:
        return 0.0, 0.0
    key = (task.instance_id, task.base_commit, hash(task.patch), frozenset(funcs))
    if key not in _REACH_CACHE:
        if len(_REACH_CACHE) > 1024:
            _REACH_CACHE.clear()
        tests = _tests_patched(task, read)
        by_file: dict[str, list[str]] = {}
        for test in task.FAIL_TO_PASS:
            by_file.setdefault(test.split("::", 1)[0], []).append(test)
        names = set().union(*(test_names(tests.after.get(f) or read(f) or "", ids) for f, ids in by_file.items()))
        _REACH_CACHE[key] = reached(names, {p: gold.after.get(p) or read(p) or "" for p in funcs})
    hit = _REACH_CACHE[key]
    found = [name in hit[path] for path, name in pairs]
    return sum(found) / len(found), float(any(found))


def _tests_patched(task: Task, read: FileSource) -> Patched:
    return apply_patch_text(task.test_patch, read) if task.test_patch.strip() else Patched()


def _covered(task: Task, funcs: Funcs, read: FileSource) -> float | None:
    """Share of ``funcs`` a listed test runs, by the task's per-test coverage (None: none)."""
    coverage = coverage_of(task.model_extra or {})
    pairs = [(path, name) for path, names in funcs.items() for name in names if name != MODULE]
    if coverage is None or not pairs:
        return None
    listed = {*task.FAIL_TO_PASS, *task.PASS_TO_PASS}
    return sum(bool(listed & set(coverage.tests_for(path, read(path) or "", [name]))) for path, name in pairs) / len(pairs)


def _code(views: dict[str, View], gold: Patched) -> tuple[dict[str, float], Funcs, Funcs, Funcs]:
    """The code features of the module docstring, the functions the agent's patch touches beyond
    the gold patch's, all it touches, and all the gold patch touches."""
    equal = similar = unchanged = count = 0.0
    gold_funcs = {p: v.changed(v.gold) for p, v in views.items() if p in gold.after}
    agent_funcs = {p: v.changed(v.agent) if v.agent.ok else {MODULE} for p, v in views.items()}
    for path, names in gold_funcs.items():
        v = views[path]
        for name in names:
            count += 1
            if v.agent.ok:
                equal += same(v.agent, v.gold, name)
                unchanged += same(v.agent, v.base, name)
                similar += similarity(v.agent.source(name), v.gold.source(name))
    q = lambda funcs: {f"{p}:{n}" for p, names in funcs.items() for n in names}  # noqa: E731
    modules_equal = all(v.agent.ok and all(same(v.agent, v.gold, n) for n in v.agent.nodes.keys() | v.gold.nodes.keys())
                        for v in views.values())
    per = (lambda x: x / count) if count else (lambda x: 0.0)
    return ({"syntax_ok": float(all(v.agent.ok for v in views.values())), "modules_equal": float(modules_equal),
             "gold_funcs_equal": per(equal), "gold_funcs_all_equal": float(bool(count) and equal == count),
             "gold_funcs_similarity": per(similar),
             "gold_funcs_unchanged": per(unchanged), "funcs_jaccard": _jaccard(q(agent_funcs), q(gold_funcs))},
            {p: names - gold_funcs.get(p, set()) for p, names in agent_funcs.items()}, agent_funcs, gold_funcs)


_DOCS = re.compile(r"(^|/)(docs?|doc_src)/|\.(rst|md|adoc)$|(^|/)(CHANGES|CHANGELOG|AUTHORS|NEWS|HISTORY)[^/]*$")


def _executable(agent: Patched, views: dict[str, View]) -> bool:
    """The agent's patch changes something that can run: the code (AST) of a Python file outside
    the tests, a new Python module, or a file that is neither Python, documentation nor a test (a
    template, a config file). Comments, docstring-free reformatting, docs and tests alone cannot fix."""
    for path in agent.paths:
        if is_test_file(path) or _DOCS.search(path):
            continue
        if path in views:
            if views[path].changed(views[path].agent):
                return True
        elif path in agent.added or not path.endswith(".py") or agent.after.get(path) is None:
            return True
    return False


def features(task: Task, patch: str | None, read: FileSource, *, probe: Sequence[str] | None = None,
             ) -> dict[str, float]:
    """The features of ``patch`` on ``task`` (see the module docstring); files the patch adds at the
    repository root (reproduction and scratch scripts: nothing imports them) are left out.
    ``probe`` (``sandbox.oneshot.probe_command()``, given by a caller that may open sandboxes): the
    command the behaviour features run their calls under; without it they are 0 and nothing runs
    (what a model that does not weigh them needs: ``uses_behaviour``)."""
    patch = without_scratch(patch or "")
    if not patch.strip():
        return {**dict.fromkeys(FEATURES, 0.0), "empty": 1.0}
    gold, agent = _gold(task, read), apply_patch_text(patch, read)
    signs = [_signature(patched, diff) for patched, diff in ((agent, patch), (gold, task.patch))]
    paths = set(agent.paths) | set(gold.paths)
    views = {p: _view(p, gold, agent, read) for p in paths
             if p.endswith(".py") and p not in agent.added and _present(agent, p)}
    text_paths = paths - set(views)
    off = sum(_off(v.agent.text, v.gold.text) for v in views.values()) + sum(
        _off(agent.after.get(p, gold.base.get(p)), gold.after.get(p, agent.base.get(p))) for p in text_paths)
    code, extra, touched, gold_funcs = _code(views, gold)
    agent_reached, agent_reached_any = _reach(task, gold, touched, read)
    covered = _covered(task, extra, read)
    test_files = {t.split("::", 1)[0] for t in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]}
    new_py_ok = all(module(agent.after[p] or "").ok for p in agent.added if p.endswith(".py"))
    return {
        "empty": 0.0, "parsed": float(agent.parsed), "applies": float(agent.applied),
        **code, "syntax_ok": float(code["syntax_ok"] and new_py_ok),
        "files": _log(len(agent.paths)), "hunks": _log(len(_HUNK.findall(patch))),
        "added": _log(sum(line[0] == "+" for line in signs[0])),
        "removed": _log(sum(line[0] == "-" for line in signs[0])), "new_files": _log(len(agent.added)),
        "tests_modified": float(any(is_test_file(p) or p in test_files or p.endswith("conftest.py")
                                    for p in agent.paths)),
        "files_jaccard": _jaccard(set(agent.paths), set(gold.paths)),
        "lines_jaccard": _jaccard(*signs),
        "tokens_jaccard": _jaccard(*([line[0] + t for line in s for t in tokens(line[1:])] for s in signs)),
        "lines_off_gold": _log(off),
        "extra_funcs": _log(sum(len(n) for n in extra.values())),
        "extra_funcs_tested": _named(task, extra, read) if covered is None else covered,
        "funcs_named_in_tests": _named(task, touched, read),
        "executable": float(_executable(agent, views)),
        **_asymmetric(*signs),
        "agent_reached": agent_reached, "agent_reached_any": agent_reached_any,
        "gold_reached": _reach(task, gold, gold_funcs, read)[0],
        **(behaviour(task, gold, agent, read, _tests_patched(task, read), probe) if probe is not None
           else dict.fromkeys(BEHAVIOUR, 0.0)),
    }


def uses_behaviour(names: Iterable[str]) -> bool:
    """Whether a model weighing ``names`` needs the behaviour features."""
    return not set(names).isdisjoint(BEHAVIOUR)
