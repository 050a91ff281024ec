"""A version of a parsed module, parsing only the statements whose lines changed.

An agent's or the gold patch changes a few lines of a module that may run to thousands (sphinx's
autodoc: 2,700), and ``compile`` of the whole text was most of what a further sim evaluation cost.
``spliced(base, text)`` is ``syntax.module(text)`` for ``text``, a version of ``base.text``, built
from ``base``'s tree:

- the lines both texts begin and end with are common; the changed base lines lie between;
- the innermost block holding the change is found: the module body, or a class body (descending
  while the change lies inside one class's body, below its header);
- in that block, the region runs from the statement holding (or preceding) the line before the
  change, which inserted lines may continue, to the statement holding its last changed line;
- the text of the region is parsed alone (a class body's inside an ``if 1:`` that takes its
  indentation), and its statements replace the block's; a class on the way down is copied with its
  new body. Every other statement is the base's own node, so ``same`` finds it equal by identity
  and its dump is computed once (``Module.code``);
- line numbers: a kept statement after the region is ``delta`` lines off; ``Module`` keeps the
  shift of each top-level statement of a block instead of rewriting nodes.

Anything the region parse cannot vouch for falls back to parsing ``text`` whole: the region does
not parse (the whole text may fail elsewhere, or not at all), it dedents out of its class, or it
empties a class. The result then says what the whole parse says.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from sweworld import pyast
from sweworld.surrogates.swr.syntax import CACHED, Module, cached, common_ends, module, remember

_WRAP = "if 1:\n"


@dataclass(frozen=True)
class _Change:
    """Base lines ``after`` (the insertion point: lines are changed after it) to ``last`` (1-based,
    ``last <= after`` when lines are only inserted), and ``delta`` lines more in the new text."""

    after: int
    last: int
    delta: int

    @property
    def end(self) -> int:
        return max(self.last, self.after)


def _span(stmt: ast.stmt) -> tuple[int, int]:
    decorators = getattr(stmt, "decorator_list", ())
    return min([stmt.lineno, *(d.lineno for d in decorators)]), stmt.end_lineno or stmt.lineno


def _change(old: list[str], new: list[str]) -> _Change:
    start, end = common_ends(old, new)
    return _Change(after=start, last=len(old) - end, delta=len(new) - len(old))


def _inner_class(body: list[ast.stmt], change: _Change) -> int | None:
    """Index of the class in ``body`` whose own body holds the whole change, if one does."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.ClassDef) and stmt.body:
            first, _ = _span(stmt.body[0])
            if first <= change.after and change.end <= (stmt.end_lineno or 0):
                return i
    return None


def _region(body: list[ast.stmt], change: _Change, block_start: int) -> tuple[int, int, int, int]:
    """(index of the first statement replaced, index after the last, first base line, last base line)."""
    spans = [_span(s) for s in body]
    i = max((k for k, (start, _) in enumerate(spans) if start <= change.after), default=0)
    lo = spans[i][0] if spans and spans[i][0] <= change.after else block_start
    if not spans or spans[i][0] > change.after:
        i = 0
    j = i
    while j < len(spans) and spans[j][0] <= change.end:
        j += 1
    hi = max([change.end, *(spans[k][1] for k in range(i, j))])
    return i, j, min(lo, change.after + 1), hi


def _parse_region(lines: list[str], nested: bool) -> list[ast.stmt] | None:
    text = "\n".join(lines)
    if not any(line.strip() and not line.lstrip().startswith("#") for line in lines):
        return []
    try:
        tree = pyast.parse(_WRAP + text if nested else text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not nested:
        return tree.body
    return tree.body[0].body if len(tree.body) == 1 and isinstance(tree.body[0], ast.If) else None


def _blocks(base: ast.Module, change: _Change) -> list[list[ast.ClassDef]]:
    """The classes on the way down to each block that holds the whole change, innermost first, the
    module body (no class) last."""
    path: list[ast.ClassDef] = []
    body = base.body
    while (k := _inner_class(body, change)) is not None:
        path.append(body[k])
        body = body[k].body
    return [path[:depth] for depth in range(len(path), -1, -1)]


def _splice_in(tree: ast.Module, path: list[ast.ClassDef], change: _Change, new_lines: list[str],
               shifts: dict[int, int]) -> list[ast.stmt] | None:
    """The module body with the region of the block under ``path`` parsed from ``new_lines``, the
    shifts of the statements it places recorded in ``shifts``; None when the region cannot stand
    alone there."""
    body = path[-1].body if path else tree.body
    i, j, lo, hi = _region(body, change, _span(body[0])[0] if path else 1)
    region = _parse_region(new_lines[lo - 1:hi + change.delta], bool(path))
    if region is None or (path and not (body[:i] or region or body[j:])):
        return None
    shifts.update({id(s): lo - 1 - (len(_WRAP.splitlines()) if path else 0) for s in region})
    shifts.update({id(s): change.delta for s in body[j:]})
    new_body = [*body[:i], *region, *body[j:]]
    for depth in range(len(path) - 1, -1, -1):  # rebuild the classes on the way down, innermost first
        outer = path[depth - 1].body if depth else tree.body
        copied = copy.copy(path[depth])
        for key in [k for k in copied.__dict__ if k.startswith(CACHED)]:  # what was kept on the base's node
            del copied.__dict__[key]
        copied.body = new_body
        at = outer.index(path[depth])
        shifts.update({id(s): change.delta for s in outer[at + 1:]})
        new_body = [*outer[:at], copied, *outer[at + 1:]]
    return new_body


def _splice(base: Module, text: str) -> Module | None:
    if base.tree is None:
        return None
    new_lines = text.split("\n")
    change = _change(base.text.split("\n"), new_lines)
    for path in _blocks(base.tree, change):
        shifts: dict[int, int] = {}
        body = _splice_in(base.tree, path, change, new_lines, shifts)
        if body is not None:
            return Module(text, tree=ast.Module(body=body, type_ignores=[]), shifts=shifts)
    return None


def spliced(base: Module, text: str) -> Module:
    """See the module docstring; kept as ``syntax.module(text)`` too, so that what parses the same
    text later (``reach``) finds it."""
    if text == base.text:
        return base
    if not base.ok:
        return module(text)
    if (known := cached(text)) is not None:
        return known
    found = _splice(base, text)
    return remember(found) if found is not None else module(text)
