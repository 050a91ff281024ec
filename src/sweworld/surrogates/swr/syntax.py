"""Python source seen as code, cheaply: a module's functions, compared by AST where their text differs.

``module(text)`` (cached by text) parses once; ``Module.ok`` says whether it parsed. Functions are
named by qualified name (``Class.method``, ``outer.inner``; several definitions of one name count
as one); ``MODULE`` names what lies outside every function body. ``Module.code(name)`` is a
normalized ``ast.dump`` (no positions, so formatting and comments do not count), computed only
when asked. ``changed_functions(before, after)``: names whose code differs, dumping only the
functions whose text differs. ``similarity(a, b)``: token similarity of two texts (lines first,
then tokens inside the lines that differ), 1.0 for equal texts.
"""

from __future__ import annotations

import ast
import difflib
import re
import threading
from collections import OrderedDict
from functools import cached_property

from sweworld import pyast

MODULE = "<module>"
CACHED = "_sweworld_"  # the prefix of what is computed once per node and kept on it
DUMP = CACHED + "dump"  # a node's normalized dump
_TOKEN = re.compile(r"\w+|[^\w\s]")


class Module:
    """One parsed module (see the module docstring). ``tree`` and ``shifts`` (id of a top-level
    statement of a block -> lines to add to its line numbers, inherited by what it holds) are given
    by ``splice.spliced``; without them the text is parsed."""

    def __init__(self, text: str, *, tree: ast.Module | None = None, shifts: dict[int, int] | None = None):
        self.text = text
        self._dumps: dict[str, str | None] = {}
        self._sources: dict[str, str] = {}
        self._shifts = shifts or {}
        self._shift_of: dict[int, int] = {}
        self.tree: ast.Module | None = tree
        if tree is None:
            try:
                self.tree = pyast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.tree = None

    @property
    def ok(self) -> bool:
        return self.tree is not None

    @cached_property
    def nodes(self) -> dict[str, list[ast.AST]]:
        """Qualified name -> definitions; ``MODULE`` -> the statements outside every function."""
        out: dict[str, list[ast.AST]] = {MODULE: []}

        def add(name: str, found: list[ast.AST], shift: int) -> None:
            out.setdefault(name, []).extend(found)
            self._shift_of.update({id(n): shift for n in found})

        def visit(body: list[ast.stmt], prefix: str, outer: int) -> None:
            for child in body:
                shift = self._shifts.get(id(child), outer)
                if isinstance(child, ast.ClassDef):
                    add(MODULE, [*child.decorator_list, *child.bases], shift)
                    visit(child.body, f"{prefix}{child.name}.", shift)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(f"{prefix}{child.name}", [child], shift)
                else:
                    add(MODULE, [child], shift)

        if self.tree is not None:
            visit(self.tree.body, "", 0)
        return out

    @cached_property
    def _lines(self) -> list[str]:
        return self.text.split("\n")

    def source(self, name: str) -> str:
        """The text of ``name``'s definitions (of the module-level statements for ``MODULE``)."""
        if name not in self._sources:
            found = [n for n in self.nodes.get(name, ()) if hasattr(n, "lineno")]
            at = lambda n: self._shift_of.get(id(n), 0)  # noqa: E731
            self._sources[name] = "\n".join("\n".join(self._lines[n.lineno - 1 + at(n):n.end_lineno + at(n)])
                                             for n in found)
        return self._sources[name]

    def code(self, name: str) -> str | None:
        """Normalized dump of ``name`` (None: not defined here); each node is dumped once, and a
        spliced module shares the nodes it keeps with its base."""
        if name not in self._dumps:
            found = self.nodes.get(name)
            self._dumps[name] = None if found is None else "|".join(_dump(n) for n in found)
        return self._dumps[name]


def _dump(node: ast.AST) -> str:
    found = node.__dict__.get(DUMP)
    if found is None:
        found = ast.dump(node)
        setattr(node, DUMP, found)
    return found


_PARSED: OrderedDict[str, Module] = OrderedDict()
_KEEP = 256
_LOCK = threading.Lock()  # rollouts and fidelity compute features from thread pools


def module(text: str) -> Module:
    """``text`` parsed, the last 256 texts kept (with what ``remember`` was given)."""
    with _LOCK:
        found = _PARSED.get(text)
        if found is not None:
            _PARSED.move_to_end(text)
            return found
    return remember(Module(text))


def cached(text: str) -> Module | None:
    """What ``module(text)`` would return without parsing, if it is kept."""
    return _PARSED.get(text)


def remember(parsed: Module) -> Module:
    """Keep ``parsed`` as what ``module(parsed.text)`` returns (``splice.spliced`` gives its modules)."""
    with _LOCK:
        _PARSED[parsed.text] = parsed
        _PARSED.move_to_end(parsed.text)
        while len(_PARSED) > _KEEP:
            _PARSED.popitem(last=False)
    return parsed


def changed_functions(before: str | None, after: str | None) -> set[str] | None:
    """See the module docstring; None when either side does not parse (an absent side is empty)."""
    old, new = module(before or ""), module(after or "")
    if not old.ok or not new.ok:
        return None
    return {name for name in old.nodes.keys() | new.nodes.keys() if not same(old, new, name)}


def same(a: Module, b: Module, name: str) -> bool:
    """``name`` has the same code in both modules (the same nodes, the same text, or the same AST)."""
    x, y = a.nodes.get(name), b.nodes.get(name)
    if x is not None and y is not None and len(x) == len(y) and all(m is n for m, n in zip(x, y, strict=True)):
        return True
    return a.source(name) == b.source(name) or a.code(name) == b.code(name)


def common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many items ``a`` and ``b`` begin with in common, and how many of the rest they end with."""
    start, limit = 0, min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end = 0
    while end < limit - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, end


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _matched(a: list[str], b: list[str]) -> int:
    return sum(block.size for block in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks())


def similarity(a: str, b: str) -> float:
    """See the module docstring."""
    if a == b:
        return 1.0
    left = [line.strip() for line in a.splitlines()]
    right = [line.strip() for line in b.splitlines()]
    total = len(tokens(a)) + len(tokens(b))
    same = 0
    for tag, i, j, k, m in difflib.SequenceMatcher(a=left, b=right, autojunk=False).get_opcodes():
        if tag == "equal":
            same += sum(len(tokens(line)) for line in left[i:j])
        else:
            same += _matched(tokens(" ".join(left[i:j])), tokens(" ".join(right[k:m])))
    return 2 * same / total if total else 1.0
