"""Where a bug may be injected: functions of a module, their nodes, and exact source offsets.

A :class:`SourceFile` parses a module once and maps AST positions (1-based lines, UTF-8 byte
columns) to character offsets in the text, so that a mutation replaces only the characters of
the node it changes and leaves every other byte of the file as it was.

Only function bodies are candidates: module- and class-level code, docstrings, annotations,
f-string internals and nested definitions (visited as functions of their own) are never touched.
Test files are never candidates (:func:`is_test_path`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from sweworld import pyast

Edit = tuple[int, int, str]
"""``(start, end, replacement)``: replace ``text[start:end]`` (character offsets) by ``replacement``."""

_TEST_DIRS = frozenset({"tests", "test", "testing"})
_NEWLINE = re.compile(r"\r\n|\r|\n")
_COMMENT = re.compile(r"#[^\r\n]*")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MIN_STATEMENTS = 2


def is_test_path(path: str) -> bool:
    """True for test code: ``test_*.py``, ``*_test.py``, ``conftest.py``, or under tests/test/testing."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    name = parts[-1] if parts else ""
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return True
    return any(part in _TEST_DIRS for part in parts[:-1])


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply non-overlapping edits (any order) to ``text``."""
    out, pos = [], 0
    for start, end, replacement in sorted(edits):
        if start < pos:
            raise ValueError(f"overlapping edits at offset {start}")
        out += [text[pos:start], replacement]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def is_docstring(stmt: ast.stmt) -> bool:
    """A bare string statement (a docstring, or a string used as a comment)."""
    return isinstance(stmt, ast.Expr) and isinstance(getattr(stmt.value, "value", None), str)


def code_body(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The statements of a function, without its docstring."""
    body = func.body
    return body[1:] if body and is_docstring(body[0]) else body


@dataclass
class Function:
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    scope: tuple[int, int]
    """Character range of the whole lines of the definition (decorators included)."""


class SourceFile:
    """A parsed module with offset arithmetic; raises ``SyntaxError``/``ValueError`` if unparsable."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = pyast.parse(text)
        starts, lines = [0], []
        for match in _NEWLINE.finditer(text):
            lines.append(text[starts[-1] : match.start()])
            starts.append(match.end())
        lines.append(text[starts[-1] :])
        self._starts, self._lines = starts, lines

    # ---- offsets ---------------------------------------------------------------------------
    def offset(self, lineno: int, col: int) -> int:
        """Character offset of (1-based line, UTF-8 byte column)."""
        line = self._lines[lineno - 1]
        return self._starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node) : self.end(node)]

    def line_start(self, lineno: int) -> int:
        return self._starts[lineno - 1]

    def line_end(self, lineno: int, *, terminator: bool) -> int:
        """End of line ``lineno``, after its newline when ``terminator``."""
        if terminator and lineno < len(self._starts):
            return self._starts[lineno]
        return self._starts[lineno - 1] + len(self._lines[lineno - 1])

    def find_token(self, start: int, end: int, pattern: str) -> tuple[int, int] | None:
        """The one match of ``pattern`` in ``text[start:end]`` outside comments (an operator gap)."""
        gap = _COMMENT.sub(lambda m: " " * len(m.group()), self.text[start:end])
        found = list(re.finditer(pattern, gap))
        return (start + found[0].start(), start + found[0].end()) if len(found) == 1 else None

    def own_lines(self, stmt: ast.stmt) -> tuple[int, int] | None:
        """``(start, end)`` of the whole lines of ``stmt`` (newline included) if nothing else is on them."""
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        before = self.text[self.line_start(first) : self.start(stmt)]
        after = _COMMENT.sub("", self.text[self.end(stmt) : self.line_end(last, terminator=False)])
        if before.strip() or after.strip():
            return None
        return self.line_start(first), self.line_end(last, terminator=True)

    # ---- candidates ------------------------------------------------------------------------
    @cached_property
    def functions(self) -> list[Function]:
        """Every function with at least two statements, with a qualified name, in source order."""
        found: list[Function] = []

        def visit(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if len(code_body(child)) >= _MIN_STATEMENTS:
                        found.append(Function(f"{prefix}{child.name}", child, self._scope(child)))
                    visit(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.stmt):
                    visit(child, prefix)

        visit(self.tree, "")
        return sorted(found, key=lambda f: (f.node.lineno, f.node.col_offset))

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return self.line_start(first), self.line_end(node.end_lineno or node.lineno, terminator=True)

    def is_elif(self, stmts: list[ast.stmt]) -> bool:
        """True when ``stmts`` is the ``orelse`` of an ``if`` written as ``elif``."""
        return (
            len(stmts) == 1
            and isinstance(stmts[0], ast.If)
            and self.text.startswith("elif", self.start(stmts[0]))
        )

    def statement_lists(self, func: Function) -> Iterator[tuple[ast.AST, list[ast.stmt]]]:
        """``(owner, statements)`` for every block of the function body (not nested definitions)."""
        todo: list[tuple[ast.AST, list[ast.stmt]]] = [(func.node, code_body(func.node))]
        while todo:
            owner, stmts = todo.pop(0)
            yield owner, stmts
            for stmt in stmts:
                if isinstance(stmt, _DEFS):
                    continue
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(stmt, field, None)
                    if block:  # an elif is a one-statement list: nothing removable there
                        todo.append((stmt, block))
                for sub in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
                    todo.append((sub, sub.body))

    def nodes(self, func: Function) -> Iterator[ast.AST]:
        """Every node of the function body a mutation may change, in a deterministic order."""
        for stmt in code_body(func.node):
            yield from self._walk(stmt)

    def _walk(self, node: ast.AST) -> Iterator[ast.AST]:
        if isinstance(node, (*_DEFS, ast.JoinedStr, ast.Global, ast.Nonlocal)):
            return
        if isinstance(node, ast.Expr) and is_docstring(node):
            return
        yield node
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns", "type_comment"):
                continue
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, ast.AST):
                    yield from self._walk(child)


# ---- expression helpers ------------------------------------------------------------------
def short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_value(node.operand)
        return None if inner is None or not isinstance(node.operand, ast.Constant) else -inner
    return None


_TIGHT_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _binds_tighter_than_add(node: ast.AST) -> bool:
    """True if ``node`` can be followed by ``+ 1`` without parentheses."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _TIGHT_BINOPS)
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not)
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))


def needs_parens_after_not(node: ast.AST) -> bool:
    return isinstance(node, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr))


def bump(src: SourceFile, node: ast.AST, delta: int) -> Edit:
    """An edit that adds ``delta`` to the integer expression ``node``."""
    start, end, seg = src.start(node), src.end(node), src.segment(node)
    value = int_value(node)
    if value is not None:
        return start, end, str(value + delta)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, (ast.Add, ast.Sub))
        and int_value(node.right) is not None
        and isinstance(node.right, ast.Constant)
    ):
        const = node.right.value + (delta if isinstance(node.op, ast.Add) else -delta)
        if const > 0:  # n - 1 -> n - 2, n + 1 -> n + 2 (not n - 1 + 1)
            return src.start(node.right), src.end(node.right), str(const)
        if const == 0:  # n - 1 -> n
            left = src.segment(node.left)
            return start, end, left if _binds_tighter_than_add(node.left) else f"({left})"
    text = seg if _binds_tighter_than_add(node) else f"({seg})"
    return start, end, f"{text} {'+' if delta > 0 else '-'} {abs(delta)}"


# ---- site predicates ---------------------------------------------------------------------
def is_range(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and 1 <= len(node.args) <= 3
        and not node.keywords
        and not any(isinstance(arg, ast.Starred) for arg in node.args)
    )


def is_guard(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and len(stmt.body) <= 3
        and isinstance(stmt.body[-1], (ast.Raise, ast.Return))
    )


_SEQUENCE_LIKE = (ast.JoinedStr, ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.Set)


def arith_ok(op: ast.operator, left: ast.AST, right: ast.AST) -> bool:
    """False on strings, bytes and container displays (``+``/``*``/``%`` on them is not arithmetic)."""
    for side in (left, right):
        if isinstance(side, _SEQUENCE_LIKE) or (
            isinstance(side, ast.Constant) and isinstance(side.value, (str, bytes))
        ):
            return False
    if isinstance(op, ast.Mod):  # "%" formats strings unless the divisor is a number
        return isinstance(right, ast.Constant) and type(right.value) is int
    return True


def call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


_OTHER_CHAR = {" ": "", ",": ";", ".": ",", ":": ";", "-": "_", "_": "-", "/": "\\", "\n": " "}


def other_string(value: str) -> str:
    """A plausible different string: the first cased letter's case flipped, else one char less."""
    for index, char in enumerate(value):
        flipped = char.swapcase()
        if flipped != char and len(flipped) == 1 and flipped.swapcase() == char:
            return value[:index] + flipped + value[index + 1 :]
    if len(value) > 1:
        return value[:-1]
    return _OTHER_CHAR.get(value, value + value)
