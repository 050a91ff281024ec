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
from functools import cached_property, lru_cache

from sweworld import pyast

MODULE = "<module>"
_TOKEN = re.compile(r"\w+|[^\w\s]")


class Module:
    """One parsed module (see the module docstring)."""

    def __init__(self, text: str):
        self.text = text
        self._dumps: dict[str, str | None] = {}
        try:
            self.tree: ast.Module | None = pyast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.tree = None

    @property
    def ok(self) -> bool:
        return self.tree is not None

    @cached_property
    def nodes(self) -> dict[str, list[ast.AST]]:
        """Qualified name -> definitions; ``MODULE`` -> the statements outside every function."""
        out: dict[str, list[ast.AST]] = {MODULE: []}

        def visit(body: list[ast.stmt], prefix: str) -> None:
            for child in body:
                if isinstance(child, ast.ClassDef):
                    out[MODULE] += [*child.decorator_list, *child.bases]
                    visit(child.body, f"{prefix}{child.name}.")
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.setdefault(f"{prefix}{child.name}", []).append(child)
                else:
                    out[MODULE].append(child)

        if self.tree is not None:
            visit(self.tree.body, "")
        return out

    @cached_property
    def _lines(self) -> list[str]:
        return self.text.split("\n")

    def source(self, name: str) -> str:
        """The text of ``name``'s definitions (of the module-level statements for ``MODULE``)."""
        return "\n".join("\n".join(self._lines[n.lineno - 1:n.end_lineno]) for n in self.nodes.get(name, ())
                         if hasattr(n, "lineno"))

    def code(self, name: str) -> str | None:
        """Normalized dump of ``name`` (None: not defined here)."""
        if name not in self._dumps:
            found = self.nodes.get(name)
            self._dumps[name] = None if found is None else "|".join(ast.dump(n) for n in found)
        return self._dumps[name]


@lru_cache(maxsize=256)
def module(text: str) -> Module:
    return Module(text)


def changed_functions(before: str | None, after: str | None) -> set[str] | None:
    """See the module docstring; None when either side does not parse (an absent side is empty)."""
    old, new = module(before or ""), module(after or "")
    if not old.ok or not new.ok:
        return None
    return {name for name in old.nodes.keys() | new.nodes.keys() if not same(old, new, name)}


def same(a: Module, b: Module, name: str) -> bool:
    """``name`` has the same code in both modules (compared as text first, then as AST)."""
    return a.source(name) == b.source(name) or a.code(name) == b.code(name)


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
