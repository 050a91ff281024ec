"""Which functions the FAIL_TO_PASS tests reach, by a static call graph over names.

A test id (``path::Class::test_name[param]``) names a function of a test file (read after the test
patch). What it references (names, attribute names, its fixtures' names: the parameters pytest fills)
is followed through the test file's own helpers and fixtures, then into the functions of the
source files a patch changes: a function is reached when its name is referenced by a test or by a
reached function (a class name reaches its ``__init__``/``__call__``/``__new__``/``__post_init__``
and its properties' bodies stay under their own names). Names, not types: ``obj.render()``
reaches every ``render``, so the graph over-approximates, which is what a "could this change matter
to the failing tests" feature needs.

``test_names(text, tests)``: what the tests ``tests`` of a test file's ``text`` reference;
``reached(names, sources)``: ``sources`` maps a source path to its text (after either patch);
returns path -> the functions those names reach (qualified as ``syntax.Module`` names them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import lru_cache

from sweworld.surrogates.swr.syntax import CACHED, module

_ENTRY_METHODS = ("__init__", "__call__", "__new__", "__post_init__")
_DEPTH = 6
_REFS = CACHED + "refs"


def _referenced(nodes: Iterable[ast.AST]) -> set[str]:
    return set().union(*(_names(node) for node in nodes))


def _names(node: ast.AST) -> frozenset[str]:
    """The names one definition references, kept on the node: a spliced module (``splice``) shares
    the definitions it keeps with its base, so only changed ones are walked again."""
    found = node.__dict__.get(_REFS)
    if found is not None:
        return found
    out: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            out.add(child.id)
        elif isinstance(child, ast.Attribute):
            out.add(child.attr)
        elif isinstance(child, ast.arg):
            out.add(child.arg)  # a fixture parameter names the fixture
        elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.isidentifier():
            out.add(child.value)  # getattr(obj, "name"), string directives
    setattr(node, _REFS, frozenset(out))
    return frozenset(out)


def _short(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


class _Graph:
    """Qualified function name -> the names its body references (classes' entry methods also under
    the class name), each walked when first asked for: a call graph reaches few of a module's
    definitions."""

    def __init__(self, text: str):
        mod = module(text)
        self._defs = {name: defs for name, defs in mod.nodes.items() if defs and name != "<module>"}
        self._entries: dict[str, set[str]] = {}
        for name in self._defs:
            owner, _, method = name.rpartition(".")
            if owner and method in _ENTRY_METHODS:
                self._entries.setdefault(owner, set()).add(method)
        self.names = list(dict.fromkeys([*self._defs, *self._entries]))
        self._refs: dict[str, frozenset[str]] = {}

    def refs(self, name: str) -> frozenset[str]:
        found = self._refs.get(name)
        if found is None:
            found = self._refs[name] = frozenset(_referenced(self._defs.get(name, ())) | self._entries.get(name, set()))
        return found


@lru_cache(maxsize=128)
def _graph(text: str) -> _Graph:
    return _Graph(text)


def test_names(text: str, tests: Iterable[str]) -> frozenset[str]:
    """What the named tests of one test file reference, through the file's helpers and fixtures."""
    return _test_names(text, frozenset(tests))


@lru_cache(maxsize=128)
def _test_names(text: str, tests: frozenset[str]) -> frozenset[str]:
    graph = _graph(text)
    by_short: dict[str, list[str]] = {}
    for name in graph.names:
        by_short.setdefault(_short(name), []).append(name)
    frontier = {t.split("[", 1)[0].split("::")[-1] for t in tests}
    seen: set[str] = set()
    names: set[str] = set(frontier)
    while frontier:
        current, frontier = frontier, set()
        for short in current:
            for name in by_short.get(short, ()):
                if name not in seen:
                    seen.add(name)
                    new = graph.refs(name) - names
                    names |= new
                    frontier |= new
    return frozenset(names)


def reached(names: set[str], sources: Mapping[str, str]) -> dict[str, set[str]]:
    """The functions of ``sources`` reached from ``names`` (see the module docstring)."""
    graphs = {path: _graph(text) for path, text in sources.items()}
    out: dict[str, set[str]] = {path: set() for path in sources}
    frontier = set(names)
    known = set(names)
    for _ in range(_DEPTH):
        new: set[str] = set()
        for path, graph in graphs.items():
            for name in graph.names:
                if name not in out[path] and (_short(name) in frontier or name in frontier):
                    out[path].add(name)
                    new |= graph.refs(name) - known
        if not new:
            break
        known |= new
        frontier = new
    return out
