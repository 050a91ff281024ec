"""Calls with literal arguments that the FAIL_TO_PASS tests make to functions of the source modules.

``literal_calls(test_text, test_ids, modules)``: in the bodies of the tests ``test_ids`` (pytest ids
``path::Class::test_name[param]``) of one test file's text, every call of a module-level function
or of a static/class method (``Class.method``) defined in ``modules`` (repository path -> names
``defined`` there) whose arguments are all literals: what ``ast.literal_eval`` reads, and
expressions over builtin types and the names the test file imports from the standard library
(``restify(Struct)``, ``f(Decimal("1.5"))``, ``stringify(List[int])``), evaluated inside the
probe. A name counts as a literal when the test file binds it to one: a
``@pytest.mark.parametrize`` list (one call per row of every id of the test, ``pytest.param(...)``
rows too; several decorators multiply), a plain assignment in the test's body, or a module-level
constant of the test file. The called name is resolved through the test file's imports (``from
pkg.mod import f as g``, ``import pkg.mod as m``; at module level and in the test) to a module
path; a name that no import places is taken from the one module defining it, if only one does.
``defined(module)``: those names of one ``syntax.Module``.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from sweworld.surrogates.swr.syntax import Module, module

MAX_CALLS = 48
MAX_ROWS = 16
MAX_ARGS = 20_000
"""Calls kept per task, parametrize rows kept per test, characters of one call's arguments."""


@dataclass(frozen=True)
class Call:
    """``name`` of the module at ``path`` called on ``args``/``kwargs`` (the source of a tuple and
    of a dict), which use the names the import statements ``setup`` bind."""

    path: str
    name: str
    args: str
    kwargs: str
    setup: tuple[str, ...] = ()


def defined(mod: Module) -> frozenset[str]:
    """Module-level functions, and ``Class.method`` for static and class methods of top-level classes."""
    out: set[str] = set()
    for node in mod.tree.body if mod.tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.ClassDef):
            out |= {f"{node.name}.{child.name}" for child in node.body
                    if isinstance(child, ast.FunctionDef)
                    and any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                            for d in child.decorator_list)}
    return frozenset(out)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


_SAFE_BUILTINS = frozenset(n for n in dir(builtins) if isinstance(getattr(builtins, n), type)) | {"Ellipsis"}
"""Builtin names an argument may use: the types (``str``, ``int``, ``frozenset``, exceptions)."""


def _standard(node: ast.expr, stdlib: Mapping[str, str]) -> bool:
    """``node`` is a chain of attributes, subscripts and calls rooted at a standard name."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and (node.id in stdlib or node.id in _SAFE_BUILTINS)


def _literal(node: ast.AST, env: Mapping[str, ast.expr], stdlib: Mapping[str, str]) -> ast.expr:
    """``node`` with the names ``env`` binds substituted, if what is left is a literal or an
    expression over literals and standard names: builtin types, names the test file imports from
    the standard library (``stdlib``), their attributes, subscripts and calls (ValueError otherwise)."""
    sub = lambda n: _literal(n, env, stdlib)  # noqa: E731
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in stdlib or node.id in _SAFE_BUILTINS:
            return node
        raise ValueError(node.id)
    if isinstance(node, ast.Constant):
        return node
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return type(node)(elts=[sub(e) for e in node.elts], ctx=ast.Load())
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("**")
        return ast.Dict(keys=[sub(k) for k in node.keys], values=[sub(v) for v in node.values])
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(op=node.op, operand=sub(node.operand))
    if isinstance(node, ast.BinOp):
        return ast.BinOp(left=sub(node.left), op=node.op, right=sub(node.right))
    if isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)) and _standard(node, stdlib):
        if isinstance(node, ast.Attribute):
            return ast.Attribute(value=sub(node.value), attr=node.attr, ctx=ast.Load())
        if isinstance(node, ast.Subscript):
            return ast.Subscript(value=sub(node.value), slice=sub(node.slice), ctx=ast.Load())
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise ValueError("*")
        return ast.Call(func=sub(node.func), args=[sub(a) for a in node.args],
                        keywords=[ast.keyword(arg=k.arg, value=sub(k.value)) for k in node.keywords])
    raise ValueError(type(node).__name__)


def _constants(body: Iterable[ast.stmt], env: Mapping[str, ast.expr], stdlib: Mapping[str, str]) -> dict[str, ast.expr]:
    """Names bound once, by a plain assignment, to a literal (under ``env``)."""
    out: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if name in seen:
                out.pop(name, None)
                continue
            seen.add(name)
            try:
                out[name] = _literal(stmt.value, {**env, **out}, stdlib)
            except ValueError:
                pass
    return out


def _rows(decorator: ast.expr, env: Mapping[str, ast.expr], stdlib: Mapping[str, str]) -> list[dict[str, ast.expr]] | None:
    """The rows of one ``parametrize`` decorator (None: it is not one)."""
    if not (isinstance(decorator, ast.Call) and (_dotted(decorator.func) or "").endswith("parametrize")
            and len(decorator.args) >= 2):
        return None
    try:
        names = ast.literal_eval(decorator.args[0])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return []
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    elif not (isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names)):
        return []
    values = decorator.args[1]
    if isinstance(values, ast.Name) and isinstance(env.get(values.id), (ast.List, ast.Tuple)):
        values = env[values.id]
    if not isinstance(values, (ast.List, ast.Tuple)):
        return []
    rows = []
    for item in values.elts[:MAX_ROWS]:
        if isinstance(item, ast.Call) and (_dotted(item.func) or "").endswith("param"):
            item = item.args[0] if len(names) == 1 and item.args else ast.Tuple(elts=item.args, ctx=ast.Load())
        parts = [item] if len(names) == 1 else list(item.elts) if isinstance(item, (ast.Tuple, ast.List)) else []
        row = {}
        for name, part in zip(names, parts if len(parts) == len(names) else [], strict=False):
            try:
                row[name] = _literal(part, env, stdlib)
            except ValueError:
                pass
        rows.append(row)
    return rows


def _stdlib(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> the statement importing it, for the imports of standard modules among ``nodes``."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".", 1)[0] in sys.stdlib_module_names:
                    out[alias.asname or alias.name.split(".", 1)[0]] = ast.unparse(ast.Import(names=[alias]))
        elif (isinstance(node, ast.ImportFrom) and not node.level
              and (node.module or "").split(".", 1)[0] in sys.stdlib_module_names):
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = ast.unparse(ast.ImportFrom(module=node.module, names=[alias], level=0))
    return out


def _call(where: tuple[str, str], node: ast.Call, env: Mapping[str, ast.expr], stdlib: Mapping[str, str]) -> Call | None:
    """The ``Call`` of ``node`` if every argument is a literal under ``env``."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    try:
        args = ast.Tuple(elts=[_literal(a, env, stdlib) for a in node.args], ctx=ast.Load())
        kwargs = ast.Dict(keys=[ast.Constant(k.arg) for k in node.keywords],
                          values=[_literal(k.value, env, stdlib) for k in node.keywords])
        text = ast.unparse(args), ast.unparse(kwargs)
    except (ValueError, RecursionError):
        return None
    if sum(map(len, text)) > MAX_ARGS:
        return None
    used = {n.id for part in (args, kwargs) for n in ast.walk(part) if isinstance(n, ast.Name)}
    return Call(*where, *text, tuple(sorted({stdlib[n] for n in used if n in stdlib})))


def _imports(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the import statements among ``nodes``."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    out[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _dotted_names(path: str) -> list[str]:
    """What a module path may be imported as (``src/pkg/mod.py``: ``src.pkg.mod``, ``pkg.mod``, ``mod``)."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts))]


def _resolve(target: str, imports: Mapping[str, str], local: frozenset[str],
             modules: Mapping[str, frozenset[str]]) -> tuple[str, str] | None:
    """(module path, name) that ``target`` (a dotted name in the test file) calls, or None."""
    head, _, rest = target.partition(".")
    if head in local and head not in imports:
        return None  # the test file's own helper
    full = imports[head] + ("." + rest if rest else "") if head in imports else None
    if full:
        for path, names in modules.items():
            for dotted in _dotted_names(path):
                if full.startswith(dotted + ".") and full[len(dotted) + 1:] in names:
                    return path, full[len(dotted) + 1:]
    segments = (full or target).split(".")
    if full and segments[0] not in {d.split(".", 1)[0] for path in modules for d in _dotted_names(path)}:
        return None  # imported from another package
    for tail in (".".join(segments[-2:]), segments[-1]):
        owners = [path for path, names in modules.items() if tail in names]
        if len(owners) == 1:
            return owners[0], tail
    return None


def _test_node(tree: ast.Module, test_id: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.expr]] | None:
    """The test function of ``test_id`` and the decorators of it and of its classes."""
    *classes, name = test_id.split("::")[1:] or [""]
    name = name.split("[", 1)[0]
    body, decorators = tree.body, []
    for cls in classes:
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if found is None:
            return None
        body, decorators = found.body, [*decorators, *found.decorator_list]
    func = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    return None if func is None else (func, [*decorators, *func.decorator_list])


def literal_calls(test_text: str, test_ids: Iterable[str], modules: Mapping[str, frozenset[str]]) -> list[Call]:
    """See the module docstring."""
    return list(_literal_calls(test_text, tuple(sorted(set(test_ids))), tuple(sorted(modules.items()))))


def _top_imports(tree: ast.Module) -> list[ast.stmt]:
    """The import statements of the module level (and of its ``if``/``try`` blocks)."""
    out: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, (ast.If, ast.Try)):
            out += [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return out


@lru_cache(maxsize=64)
def _scope(test_text: str) -> tuple[ast.Module, dict[str, str], dict[str, str], dict[str, ast.expr], frozenset[str]] | None:
    """What the test file binds at module level: its parsed tree, imports (all and standard ones),
    literal constants, and its own functions', classes' and variables' names."""
    tree = module(test_text).tree
    if tree is None:
        return None
    top = _top_imports(tree)
    stdlib = _stdlib(top)
    local = frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    local |= frozenset(t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name))
    return tree, _imports(top), stdlib, _constants(tree.body, {}, stdlib), local


@lru_cache(maxsize=256)
def _literal_calls(test_text: str, test_ids: tuple[str, ...], modules: tuple) -> tuple[Call, ...]:
    scope = _scope(test_text)
    if scope is None or not any(names for _, names in modules):
        return ()
    tree, file_imports, file_stdlib, constants, local = scope
    by_path = dict(modules)
    out: dict[Call, None] = {}
    for test_id in test_ids:
        found = _test_node(tree, test_id)
        if found is None:
            continue
        func, decorators = found
        nodes = list(ast.walk(func))
        imports = {**file_imports, **_imports(nodes)}
        stdlib = {**file_stdlib, **_stdlib(nodes)}
        tables = [rows for rows in (_rows(d, constants, stdlib) for d in decorators) if rows is not None]
        for combo in itertools.islice(itertools.product(*tables), MAX_ROWS):
            env = {**constants, **{k: v for row in combo for k, v in row.items()}}
            env.update(_constants(func.body, env, stdlib))
            for node in nodes:
                target = _dotted(node.func) if isinstance(node, ast.Call) else None
                where = _resolve(target, imports, local, by_path) if target else None
                call = _call(where, node, env, stdlib) if where else None
                if call is not None:
                    out[call] = None
                if len(out) >= MAX_CALLS:
                    return tuple(out)
    return tuple(out)
