"""The test sessions of a noxfile.py, read with ``ast`` (nothing of it runs).

A session is a function decorated with ``nox.session`` (or ``session`` imported from nox); its name is
the decorator's ``name=`` or the function's. Test-like ones ('tests', 'unit', 'pytest-3.11'; not lint,
docs, release, typing or coverage-only ones) give the positional arguments of their
``session.install(...)`` calls (and of ``session.run_install("uv", "sync", ...)``/``("pip", "install", ...)``),
read as pip arguments: strings, module-level constants and lists, subscripts of module-level dicts,
``nox.project.load_toml("pyproject.toml")[...]`` and ``nox.project.dependency_groups(...)``. Dictionary keys
and keyword arguments are never taken; what cannot be read statically (an f-string, a call) is noted.
Helper functions of the module called with the session are followed. ``session.run("pytest", ...)``
gives a hint for the test command.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from sweworld.mine.testdeps.common import Found, looks_like_tests, pip_args

_PYPROJECT = object()
"""A module-level name bound to the loaded pyproject.toml."""


class _Unreadable(Exception):
    """An argument whose value is not known without running the noxfile."""


class Noxfile:
    """A parsed noxfile: its module-level constants and functions."""

    def __init__(self, module: ast.Module, pyproject: dict[str, Any]):
        self.pyproject = pyproject
        self.constants: dict[str, ast.expr] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for node in module.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.constants[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.constants[node.target.id] = node.value
            elif isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
        for func in self.functions.values():  # a helper's parameter defaults (tests_impl(..., group="dev")):
            args = func.args              # the value a session gets that does not pass its own
            for arg, default in zip(args.args[len(args.args) - len(args.defaults):], args.defaults, strict=True):
                self.constants.setdefault(arg.arg, default)
            for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                if default is not None:
                    self.constants.setdefault(arg.arg, default)

    def value(self, node: ast.expr, depth: int = 0) -> Any:
        """The static value of ``node`` (str, list, dict, the pyproject marker) or _Unreadable."""
        if depth > 8:
            raise _Unreadable("too deep")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Constant) and node.value is None:  # an optional argument left out: nothing
            return []
        if isinstance(node, (ast.List, ast.Tuple)):
            return [v for elt in node.elts for v in self._spread(elt, depth + 1)]
        if isinstance(node, ast.Dict):
            return {self.value(k, depth + 1): v for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.value(self.constants[node.id], depth + 1)
        if isinstance(node, ast.Subscript):
            container, key = self.value(node.value, depth + 1), self.value(node.slice, depth + 1)
            if container is _PYPROJECT:
                container = self.pyproject
            if isinstance(container, dict) and key in container:
                item = container[key]
                return self.value(item, depth + 1) if isinstance(item, ast.expr) else item
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise _Unreadable(ast.unparse(node))

    def _spread(self, node: ast.expr, depth: int) -> list[Any]:
        value = self.value(node.value if isinstance(node, ast.Starred) else node, depth)
        return list(value) if isinstance(node, ast.Starred) and isinstance(value, (list, tuple)) else [value]

    def _call(self, node: ast.Call, depth: int) -> Any:
        name = ast.unparse(node.func)
        texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name.endswith("dependency_groups"):  # nox.project.dependency_groups(PYPROJECT, "test", ...)
            return [f"--group={g}" for g in texts]
        if any(t.endswith("pyproject.toml") for t in texts) or "pyproject.toml" in ast.unparse(node):
            return _PYPROJECT
        raise _Unreadable(ast.unparse(node))


def session_name(func: ast.FunctionDef) -> str | None:
    """The nox session name of ``func`` when it is decorated as one, else None."""
    for deco in func.decorator_list:
        call = deco if isinstance(deco, ast.Call) else None
        target = ast.unparse(call.func if call else deco)
        if target in ("nox.session", "session", "nox.session_decorator"):
            for kw in call.keywords if call else []:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    return kw.value.value
            return func.name
    return None


def _arguments(nox: Noxfile, call: ast.Call, where: str, found: Found, *, note: bool = True) -> list[str]:
    out: list[str] = []
    for arg in call.args:
        try:
            values = nox._spread(arg, 0)
        except _Unreadable as exc:
            if note and "posargs" not in str(exc):
                found.notes.append(f"{where}: argument {exc} not readable without running the noxfile: skipped")
            continue
        for value in values:
            if isinstance(value, str):
                out.append(value)
            else:
                found.notes.append(f"{where}: argument {ast.unparse(arg)} is not a string: skipped")
    return out


def _calls(nox: Noxfile, func: ast.FunctionDef, seen: set[str]) -> list[tuple[str, ast.Call]]:
    """(session variable, call) of every call in ``func`` in source order, helpers of the module followed."""
    if not func.args.args:
        return []
    session = func.args.args[0].arg
    out: list[tuple[str, ast.Call]] = []
    for node in sorted((n for n in ast.walk(func) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == session:
            out.append((node.func.attr, node))
        elif isinstance(node.func, ast.Name) and node.func.id in nox.functions and node.func.id not in seen:
            helper = nox.functions[node.func.id]
            if session_name(helper) is None:
                out += _calls(nox, helper, seen | {node.func.id})
    return out


def _session(nox: Noxfile, func: ast.FunctionDef, name: str, tree: Path, found: Found) -> None:
    for method, call in _calls(nox, func, {func.name}):
        where = f"noxfile.py:{call.lineno} (session {name})"
        if method == "install":
            pip_args(_arguments(nox, call, where, found), where, tree, found)
        elif method in ("run_install", "run", "run_always"):
            args = _arguments(nox, call, where, found, note=False)
            if args[:1] in (["uv"], ["pip"]) and any(a in ("install", "sync") for a in args[1:3]):
                start = next(i for i, a in enumerate(args) if a in ("install", "sync")) + 1
                pip_args(args[start:], where, tree, found)
            elif found.test_cmd is None and (args[:1] == ["pytest"] or args[:3] == ["python", "-m", "pytest"]):
                found.test_cmd = " ".join(args)


def read_nox(tree: Path, pyproject: dict[str, Any]) -> Found | None:
    """The test sessions' dependencies of the project's noxfile.py, or None when it has none."""
    path = tree / "noxfile.py"
    if not path.is_file():
        return None
    found = Found(sources=["noxfile.py"])
    try:
        module = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename="noxfile.py")
    except (SyntaxError, ValueError) as exc:
        found.notes.append(f"noxfile.py:{getattr(exc, 'lineno', '?')}: not parsable ({exc.__class__.__name__}): not used")
        return found
    nox = Noxfile(module, pyproject)
    sessions = [(name, func) for func in nox.functions.values() if (name := session_name(func))]
    tests = [(name, func) for name, func in sessions if looks_like_tests(name)]
    skipped = [name for name, _ in sessions if name not in dict(tests)]
    if skipped:
        found.notes.append(f"noxfile.py: sessions not run for tests, their installs not taken: {', '.join(skipped)}")
    for name, func in tests:
        _session(nox, func, name, tree, found)
    return found
