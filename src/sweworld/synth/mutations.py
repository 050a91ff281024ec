"""The mutation kinds: site finders that locate a bug site on the AST and splice only its source.

Each kind is a finder ``kind(src, func) -> Iterator[Site]`` over one function of a parsed module,
yielding ``(lineno, description, edits)`` per applicable site in source order. The edits replace
only the characters of the node or operator they touch, so the rest of the file stays
byte-identical and the fix is a small hunk. ``sweworld.synth`` turns sites into ``Mutation``s
(checking that the text parses and differs) and exposes each kind as ``KINDS[name](path, text)``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from sweworld.synth.candidates import (
    Edit,
    Function,
    SourceFile,
    arith_ok,
    bump,
    call_name,
    int_value,
    is_docstring,
    is_guard,
    is_range,
    needs_parens_after_not,
    other_string,
    short,
)

Site = tuple[int, str, list[Edit]]
"""``(lineno, description, edits)`` found by a kind in one function."""
Finder = Callable[[SourceFile, Function], Iterator[Site]]
FINDERS: dict[str, Finder] = {}
"""Kind name -> site finder, in the order kinds are tried (see ``sweworld.synth.KINDS``)."""


def _kind(finder: Finder) -> Finder:
    FINDERS[finder.__name__] = finder
    return finder


_CMP = {
    ast.Lt: (r"<", "<", ">="), ast.GtE: (r">=", ">=", "<"),
    ast.Gt: (r">", ">", "<="), ast.LtE: (r"<=", "<=", ">"),
    ast.Eq: (r"==", "==", "!="), ast.NotEq: (r"!=", "!=", "=="),
    ast.Is: (r"\bis\b", "is", "is not"), ast.IsNot: (r"\bis[\s\\]+not\b", "is not", "is"),
    ast.In: (r"\bin\b", "in", "not in"), ast.NotIn: (r"\bnot[\s\\]+in\b", "not in", "in"),
}  # fmt: skip


@_kind
def flip_comparison(src: SourceFile, func: Function) -> Iterator[Site]:
    """Flip one comparison operator: ``<``/``>=``, ``>``/``<=``, ``==``/``!=``, ``is``/``is not``, ``in``/``not in``."""
    for node in src.nodes(func):
        if not isinstance(node, ast.Compare):
            continue
        prev: ast.AST = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            pattern, old, new = _CMP[type(op)]
            token = src.find_token(src.end(prev), src.start(right), pattern)
            if token:
                what = f"`{old}` -> `{new}` in `{short(src.segment(node))}`"
                yield node.lineno, f"comparison {what}", [(*token, new)]
            prev = right


@_kind
def flip_boolop(src: SourceFile, func: Function) -> Iterator[Site]:
    """Flip a boolean operator: ``and`` <-> ``or`` (every operator of one chain)."""
    for node in src.nodes(func):
        if not isinstance(node, ast.BoolOp):
            continue
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        edits = []
        for left, right in zip(node.values[:-1], node.values[1:], strict=True):
            token = src.find_token(src.end(left), src.start(right), rf"\b{old}\b")
            if token is None:
                break
            edits.append((*token, new))
        else:
            yield node.lineno, f"boolean `{old}` -> `{new}` in `{short(src.segment(node))}`", edits


@_kind
def off_by_one(src: SourceFile, func: Function) -> Iterator[Site]:
    """Off by one: a ``range`` start +1 / stop -1, a slice lower +1 / upper -1, an integer constant +1."""
    nodes = list(src.nodes(func))
    bounds: dict[int, tuple[ast.AST, int, str]] = {}
    for node in nodes:
        if is_range(node):
            args = node.args  # type: ignore[attr-defined]
            if len(args) >= 2:
                bounds[id(args[0])] = (args[0], 1, "range start")
            stop = args[0] if len(args) == 1 else args[1]
            bounds[id(stop)] = (stop, -1, "range stop")
        elif isinstance(node, ast.Slice):
            if node.lower is not None:
                bounds[id(node.lower)] = (node.lower, 1, "slice lower bound")
            if node.upper is not None:
                bounds[id(node.upper)] = (node.upper, -1, "slice upper bound")
    inner = {id(n.operand) for n in nodes if isinstance(n, ast.UnaryOp) and int_value(n) is not None}
    for node in nodes:
        if id(node) in bounds:
            _, delta, what = bounds[id(node)]
        elif id(node) not in inner and int_value(node) not in (None, 0):
            delta, what = (1 if int_value(node) > 0 else -1), "integer constant"  # type: ignore[operator]
        else:
            continue
        edit = bump(src, node, delta)
        yield node.lineno, f"{what} `{short(src.segment(node))}` -> `{short(edit[2])}`", [edit]  # type: ignore[attr-defined]


@_kind
def invert_condition(src: SourceFile, func: Function) -> Iterator[Site]:
    """Invert the condition of an ``if``/``elif``: ``if c:`` -> ``if not c:`` (or ``not c`` -> ``c``)."""
    for node in src.nodes(func):
        if not isinstance(node, ast.If) or isinstance(node.test, ast.Constant):
            continue
        test, seg = node.test, src.segment(node.test)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            new = src.segment(test.operand)
            new = f"({new})" if isinstance(test.operand, ast.NamedExpr) else new
        else:
            new = f"not ({seg})" if needs_parens_after_not(test) else f"not {seg}"
        yield (
            node.lineno,
            f"condition `{short(seg)}` -> `{short(new)}`",
            [(src.start(test), src.end(test), new)],
        )


_MAX_SWAP_LINES = 12  # both bodies together: the fix stays a small hunk


def _lines(stmts: list[ast.stmt]) -> int:
    return (stmts[-1].end_lineno or 0) - stmts[0].lineno + 1


@_kind
def swap_if_else(src: SourceFile, func: Function) -> Iterator[Site]:
    """Swap the bodies of an ``if``/``else`` (not ``elif`` chains; each body on its own lines)."""
    for node in src.nodes(func):
        if not isinstance(node, ast.If) or not node.orelse or src.is_elif(node.orelse):
            continue
        body, orelse = node.body, node.orelse
        if _lines(body) + _lines(orelse) > _MAX_SWAP_LINES:
            continue
        first, second = src.own_lines(body[0]), src.own_lines(orelse[0])
        last_a, last_b = src.own_lines(body[-1]), src.own_lines(orelse[-1])
        if not (first and second and last_a and last_b) or body[0].col_offset != orelse[0].col_offset:
            continue
        a_start, a_end = first[0], src.line_end(body[-1].end_lineno or 0, terminator=False)
        b_start, b_end = second[0], src.line_end(orelse[-1].end_lineno or 0, terminator=False)
        block_a, middle, block_b = src.text[a_start:a_end], src.text[a_end:b_start], src.text[b_start:b_end]
        if block_a != block_b:
            what = f"swapped the if/else bodies of `if {short(src.segment(node.test))}`"
            yield node.lineno, what, [(a_start, b_end, block_b + middle + block_a)]


_SIMPLE = (
    ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Delete, ast.Assert,
    ast.Return, ast.Raise, ast.Import, ast.ImportFrom,
)  # fmt: skip


@_kind
def remove_statement(src: SourceFile, func: Function) -> Iterator[Site]:
    """Remove one simple statement from a block of >= 2 statements (never a block's final ``return``)."""
    for _, stmts in src.statement_lists(func):
        if len(stmts) < 2:
            continue
        for index, stmt in enumerate(stmts):
            if not isinstance(stmt, _SIMPLE) or is_docstring(stmt):
                continue
            if isinstance(stmt, ast.Return) and index == len(stmts) - 1:
                continue
            span = src.own_lines(stmt)
            if span:
                yield stmt.lineno, f"removed `{short(src.segment(stmt))}`", [(*span, "")]


@_kind
def remove_guard(src: SourceFile, func: Function) -> Iterator[Site]:
    """Remove an ``if ...: raise/return`` guard from a block of >= 2 statements."""
    for _, stmts in src.statement_lists(func):
        if len(stmts) < 2:
            continue
        for stmt in stmts:
            span = src.own_lines(stmt) if is_guard(stmt) else None
            if span:
                what = f"removed the guard `if {short(src.segment(stmt.test))}`"  # type: ignore[attr-defined]
                yield stmt.lineno, what, [(*span, "")]


@_kind
def remove_return(src: SourceFile, func: Function) -> Iterator[Site]:
    """Replace ``return x`` by ``return None`` in a function with another value ``return``."""
    returns = [
        node
        for node in src.nodes(func)
        if isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
    ]
    if len(returns) < 2:
        return
    for node in returns:
        value = node.value
        assert value is not None
        what = f"`return {short(src.segment(value))}` -> `return None`"
        yield node.lineno, what, [(src.start(value), src.end(value), "None")]


_ARITH = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "//"), ast.FloorDiv: ("//", "*"),
    ast.Div: ("/", "*"), ast.Mod: ("%", "//"), ast.Pow: ("**", "*"),
}  # fmt: skip


@_kind
def change_arith_op(src: SourceFile, func: Function) -> Iterator[Site]:
    """Change an arithmetic operator (also augmented): ``+``/``-``, ``*`` -> ``//``, ``/`` -> ``*`` ..."""
    for node in src.nodes(func):
        if (
            isinstance(node, ast.BinOp)
            and type(node.op) in _ARITH
            and arith_ok(node.op, node.left, node.right)
        ):
            left, right, suffix = node.left, node.right, ""
        elif (
            isinstance(node, ast.AugAssign)
            and type(node.op) in _ARITH
            and arith_ok(node.op, node.target, node.value)
        ):
            left, right, suffix = node.target, node.value, "="
        else:
            continue
        old, new = _ARITH[type(node.op)]  # type: ignore[attr-defined]
        token = src.find_token(src.end(left), src.start(right), re.escape(old + suffix))
        if token:
            what = f"`{old}{suffix}` -> `{new}{suffix}` in `{short(src.segment(node))}`"
            yield node.lineno, what, [(*token, new + suffix)]  # type: ignore[attr-defined]


_SYMMETRIC_CALLS = frozenset({"max", "min", "gcd", "lcm", "hypot", "isclose"})


@_kind
def swap_call_args(src: SourceFile, func: Function) -> Iterator[Site]:
    """Swap the first two positional arguments of a call with >= 2 positional arguments."""
    for node in src.nodes(func):
        if not isinstance(node, ast.Call) or len(node.args) < 2 or call_name(node) in _SYMMETRIC_CALLS:
            continue
        first, second = node.args[0], node.args[1]
        if isinstance(first, ast.Starred) or isinstance(second, ast.Starred):
            continue
        seg1, seg2 = src.segment(first), src.segment(second)
        if seg1 == seg2:
            continue
        what = f"swapped arguments `{short(seg1)}` and `{short(seg2)}` of `{short(src.segment(node.func))}`"
        edits = [(src.start(first), src.end(first), seg2), (src.start(second), src.end(second), seg1)]
        yield node.lineno, what, edits


@_kind
def replace_literal(src: SourceFile, func: Function) -> Iterator[Site]:
    """Replace a literal: ``True``/``False``, ``0``/``1``, a non-empty one-line string by another."""
    for node in src.nodes(func):
        if not isinstance(node, ast.Constant):
            continue
        value, seg = node.value, src.segment(node)
        if isinstance(value, bool):
            new = repr(not value)
        elif type(value) is int and value in (0, 1):
            new = str(1 - value)
        elif isinstance(value, str) and value and "\n" not in seg and "\r" not in seg:
            new = repr(other_string(value))
        else:
            continue
        yield (
            node.lineno,
            f"literal `{short(seg)}` -> `{short(new)}`",
            [(src.start(node), src.end(node), new)],
        )


@_kind
def remove_loop_control(src: SourceFile, func: Function) -> Iterator[Site]:
    """Remove a ``break`` or ``continue`` (its line, or ``pass`` in its place if it is alone)."""
    for _, stmts in src.statement_lists(func):
        for stmt in stmts:
            if not isinstance(stmt, (ast.Break, ast.Continue)):
                continue
            span = src.own_lines(stmt) if len(stmts) >= 2 else None
            keyword = "break" if isinstance(stmt, ast.Break) else "continue"
            edit = (*span, "") if span else (src.start(stmt), src.end(stmt), "pass")
            yield stmt.lineno, f"removed `{keyword}`", [edit]
