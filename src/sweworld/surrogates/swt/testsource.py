"""What a test file's text says without running it: its tests, and the source a failure shows.

``static_tests(path, text)``: the pytest ids of the tests defined in a module, in definition order
(``test*`` functions; ``test*`` methods of ``Test*`` classes and of ``TestCase`` subclasses, a
subclass of the module's own ``TestCase`` subclass too);
parametrized tests are named without their parameters. ``failure_body(path, text, test_id)``: a
failure section as pytest writes it when nothing better was recorded: the test's source up to its
last assertion, marked with ``>``, then ``E  AssertionError`` and the location line.
``span_of(text, test_id)`` and ``test_source(text, test_id)``: where a test's function is, and its
text (from its ``def`` line: ``decorators(text, test_id)`` has the decorators).
``marked(text, test_id)``: "SKIPPED" or "XFAIL" where the test's function or its class is marked
to skip or to fail (``pytest.mark.skip``/``skipif``/``xfail``, ``unittest.skip*``/``expectedFailure``,
a ``pytestmark`` of the module) or its body skips (``pytest.skip``, ``self.skipTest``).
"""

from __future__ import annotations

import ast
import re
import textwrap
from functools import lru_cache

from sweworld import pyast

_CLASS = re.compile(r"^class (\w+)(\(.*\))?:")
_DEF = re.compile(r"^( *)(?:async )?def (test\w*)\(")


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test") or name.endswith("_test.py"))


def _is_case(node: ast.ClassDef, cases: set[str] = frozenset()) -> bool:
    """A ``TestCase`` subclass (through ``cases``, the module's ``TestCase`` subclasses above it, too)."""
    return any("TestCase" in (name := ast.unparse(base)) or name in cases for base in node.bases)


def _test_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """The module's classes pytest collects: named ``Test*``, or ``TestCase`` subclasses."""
    found, cases = [], set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            if _is_case(node, cases):
                cases.add(node.name)
            if node.name.startswith("Test") or node.name in cases:
                found.append(node)
    return found


Functions = list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]]


@lru_cache(maxsize=256)
def _test_functions(text: str) -> Functions | None:
    """(``name`` or ``Class::name``, the function, its class) of each test of a module's ``text``,
    in definition order; None when the text does not parse."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: Functions = []
    classes = _test_classes(tree)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.append((node.name, node, None))
        elif node in classes:
            found += [(f"{node.name}::{item.name}", item, node) for item in node.body
                      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")]
    return found


@lru_cache(maxsize=256)
def _definitions(text: str) -> dict[str, tuple[int, int]]:
    """``name`` or ``Class::name`` -> (first line, last line) of the test function."""
    functions = _test_functions(text)
    if functions is None:
        return _scanned(text)
    return {name: (node.lineno, node.end_lineno or node.lineno) for name, node, _ in functions}


def _scanned(text: str) -> dict[str, tuple[int, int]]:
    """``_definitions`` by indentation, for a text that does not parse (a file cut in the middle)."""
    lines = text.splitlines()
    found: dict[str, tuple[int, int]] = {}
    cls = None
    for k, line in enumerate(lines):
        if (match := _CLASS.match(line)) is not None:
            cls = match.group(1) if match.group(1).startswith("Test") or "TestCase" in (match.group(2) or "") else None
            continue
        match = _DEF.match(line)
        if match is None or (match.group(1) and cls is None) or (not match.group(1) and line[:1].isspace()):
            if line and not line[:1].isspace() and not line.startswith(("@", "#", ")")):
                cls = None
            continue
        indent = len(match.group(1))
        end = next((j for j in range(k + 1, len(lines)) if lines[j].strip() and
                    len(lines[j]) - len(lines[j].lstrip()) <= indent), len(lines))
        while end > k + 1 and not lines[end - 1].strip():
            end -= 1
        found[f"{cls}::{match.group(2)}" if indent else match.group(2)] = (k + 1, end)
    return found


def static_tests(path: str, text: str) -> list[str]:
    """The test ids of a module's text (see the module docstring)."""
    return [f"{path}::{name}" for name in _definitions(text)]


def base_id(test_id: str) -> str:
    """``test_id`` without its parameters (``path::test_x[1-2]`` -> ``path::test_x``)."""
    return test_id.split("[", 1)[0]


def definition_order(path: str, text: str) -> dict[str, int]:
    """Base test id -> its index in the file (for ordering recorded ids as pytest runs them)."""
    return {f"{path}::{name}": k for k, name in enumerate(_definitions(text))}


def span_of(text: str, test_id: str) -> tuple[int, int] | None:
    """(first line, last line) of ``test_id``'s function in its module's ``text``, None if not there."""
    return _definitions(text).get(base_id(test_id).split("::", 1)[-1])


def test_source(text: str, test_id: str) -> str | None:
    """The source lines of ``test_id``'s function in ``text``, None if not there."""
    span = span_of(text, test_id)
    return None if span is None else "\n".join(text.splitlines()[span[0] - 1:span[1]])


_SKIPS = re.compile(r"\b(?:mark\.skip(?:if)?|skip(?:If|Unless)?\b|skipTest|importorskip)")
_XFAILS = re.compile(r"\b(?:mark\.xfail|expectedFailure)\b")


def _mark_of(code: str) -> str | None:
    return "XFAIL" if _XFAILS.search(code) else "SKIPPED" if _SKIPS.search(code) else None


@lru_cache(maxsize=256)
def _marks(text: str) -> dict[str, str]:
    """``name`` or ``Class::name`` -> its mark (see ``marked``), for the marked tests of ``text``."""
    functions = _test_functions(text)
    if not functions:
        return {}
    module = next((_mark_of(ast.unparse(n)) for n in pyast.parse(text).body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)), None)

    def own(node: ast.AST | None) -> str | None:
        return next((m for d in getattr(node, "decorator_list", []) if (m := _mark_of(ast.unparse(d)))), None)

    found: dict[str, str] = {}
    for name, item, cls in functions:
        body = "\n".join(ast.unparse(s) for s in item.body)
        if (mark := own(item) or own(cls) or module
                or ("SKIPPED" if re.search(r"\b(?:pytest\.skip|skipTest)\(", body) else None)):
            found[name] = mark
    return found


def decorators(text: str, test_id: str) -> str | None:
    """The source of ``test_id``'s decorators in its module's ``text`` ("" when it has none), None
    when the text does not define it (or does not parse)."""
    name = base_id(test_id).split("::", 1)[-1]
    node = next((node for found, node, _ in _test_functions(text) or [] if found == name), None)
    return None if node is None else "\n".join(ast.unparse(d) for d in node.decorator_list)


def marked(text: str, test_id: str) -> str | None:
    """See the module docstring."""
    return _marks(text).get(base_id(test_id).split("::", 1)[-1])


def failure_body(path: str, text: str | None, test_id: str, tb: str = "auto", root: str = "/testbed",
                 message: str = "AssertionError") -> list[str]:
    """A failure section's lines for ``test_id`` in traceback style ``tb`` (long, short or line),
    ``message`` on its ``E`` line (the exception as the summary line names it, when known)."""
    span = span_of(text, test_id) if text else None
    if span is None:
        return {"line": [f"E   {message}", f"{root}/{path}: {message}"],
                "short": [f"{path}: in {base_id(test_id).split('::')[-1]}", f"E   {message}"]}.get(
            tb, ["", f"E       {message}", "", f"{path}: AssertionError"])
    first, last = span
    source = text.splitlines()[first - 1:last]
    asserts = [k for k, line in enumerate(source) if line.lstrip().startswith(("assert", "self.assert"))]
    failing = first + max(asserts, default=len(source) - 1)
    if tb in ("line", "short"):
        name = base_id(test_id).split("::")[-1]
        return [f"E   {message}", f"{root}/{path}:{failing}: {message}"] if tb == "line" else \
            [f"{path}:{failing}: in {name}", f"    {source[failing - first].strip()}", f"E   {message}"]
    source = textwrap.dedent("\n".join(source[:failing - first + 1])).splitlines()
    lines = [""]
    if "::" in test_id.split("::", 1)[-1]:
        cls, name = test_id.split("::")[-2], base_id(test_id).split("::")[-1]
        module = path.removesuffix(".py").replace("/", ".")
        lines += [f"self = <{module}.{cls} testMethod={name}>", ""]
    lines += [("    " if k < len(source) - 1 else ">   ") + line for k, line in enumerate(source)]
    return [*lines, f"E       {message}", "", f"{path}:{failing}: AssertionError"]
