"""Per-test coverage of a repository: which tests executed which lines (``CoverageMap``), as a task
row carries it (``coverage``) and as ``synth.coverage`` collects it in one run per repository.

Data only (a floor module): the synthesiser writes it, the simulated world's test selection reads it.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from functools import lru_cache

from sweworld import pyast

IMPORT_TIME = -1
"""The test index of lines run outside any test: at import or collection time."""


@dataclass
class CoverageMap:
    """Per-test line coverage of the repository's files: ``files[path][line]`` = test indices."""

    tests: list[str] = field(default_factory=list)
    files: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    """Seconds each test took in the coverage run (setup + call + teardown)."""

    @classmethod
    def from_json(cls, text: str) -> CoverageMap:
        raw = json.loads(text)
        files = {path: {int(line): ids for line, ids in lines.items()} for path, lines in raw["files"].items()}
        return cls(tests=list(raw["tests"]), files=files, durations=dict(raw.get("durations", {})))

    def to_json(self) -> str:
        return json.dumps({"tests": self.tests, "files": {p: {str(n): ids for n, ids in lines.items()}
                                                           for p, lines in self.files.items()},
                           "durations": self.durations})

    def seconds(self, tests: list[str]) -> float:
        """How long ``tests`` took in the coverage run (unknown tests count as 0)."""
        return sum(self.durations.get(test, 0.0) for test in tests)

    def tests_for_lines(self, path: str, first: int, last: int) -> list[str]:
        """Tests that executed any line in ``first..last`` of ``path``, in the suite's order; every
        test when one of those lines ran outside any test (at import or collection time)."""
        lines = self.files.get(path, {})
        ids = {i for n in range(first, last + 1) for i in lines.get(n, ())}
        if IMPORT_TIME in ids:
            return list(self.tests)
        return [self.tests[i] for i in sorted(ids)]

    def tests_for(self, path: str, text: str, functions: list[str], lines: set[int] | None = None) -> list[str]:
        """Tests that executed any line of the named functions (qualified names) of ``path``. A name
        defined more than once (``wrapper`` in each branch) means the definitions holding ``lines``
        (the changed lines), or all of them when none does."""
        spans = function_spans(text)
        ids: dict[str, None] = {}
        for name in functions:
            chosen = [(a, b) for a, b in spans.get(name, []) if lines and any(a <= n <= b for n in lines)]
            for first, last in chosen or spans.get(name, []):
                for test in self.tests_for_lines(path, first, last):
                    ids[test] = None
        order = {t: i for i, t in enumerate(self.tests)}
        return sorted(ids, key=order.__getitem__)

    @property
    def covered_files(self) -> list[str]:
        return sorted(self.files)


@lru_cache(maxsize=64)
def function_spans(text: str) -> dict[str, list[tuple[int, int]]]:
    """Qualified name (``Class.method``, ``outer.inner``) -> (first body line, last line) of each
    definition of that name in a module's text, in source order."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    spans: dict[str, list[tuple[int, int]]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                span = (child.body[0].lineno, child.end_lineno or child.lineno)
                spans.setdefault(f"{prefix}{child.name}", []).append(span)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.stmt):
                visit(child, prefix)

    visit(tree, "")
    return spans
