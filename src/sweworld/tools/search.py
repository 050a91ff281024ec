"""search (R2E-Gym's): which files under a directory contain a term, or the matching lines of a file."""

from __future__ import annotations

import posixpath
import shlex
from typing import ClassVar

from sweworld.core.executor import Executor
from sweworld.tools.base import Tool, ToolError, ToolResult, schema, text
from sweworld.tools.truncate import truncate_observation

MAX_FILES = 100


def path_kind(executor: Executor, path: str) -> str:
    """``"dir"``, ``"file"`` or ``"missing"``, asked through ``executor.run`` (works in a simulated world)."""
    q = shlex.quote(path)
    out = executor.run(f"if test -d {q}; then echo dir; elif test -e {q}; then echo file; else echo missing; fi")
    words = out.output.split()
    return words[-1] if words and words[-1] in ("dir", "file", "missing") else "missing"


class SearchTool(Tool):
    name: ClassVar[str] = "search"
    description: ClassVar[str] = (
        "Search for a literal term. In a directory (default: the repository root): list the files that "
        "contain it, with match counts (at most 100 files; .git is skipped). In a file: the matching "
        "lines with their line numbers.")
    parameters: ClassVar[dict] = schema(("search_term",), search_term=text("The literal text to search for."),
                                        path=text("A directory or file (default: the repository root)."))

    def execute(self, executor: Executor, search_term: str, path: str | None = None) -> ToolResult:
        if not search_term:
            raise ToolError("'search_term' is empty.")
        path = posixpath.normpath(posixpath.join(executor.workdir, path or "."))
        kind = path_kind(executor, path)
        if kind == "missing":
            return ToolResult(observation=f"The path {path} does not exist.")
        term, q = shlex.quote(search_term), shlex.quote(path)
        if kind == "file":
            res = executor.run(f"grep -nF -- {term} {q}")
            if not res.output.strip():
                return ToolResult(observation=f'No matches found for "{search_term}" in {path}')
            lines = []
            for line in res.output.rstrip("\n").split("\n"):
                num, _, text = line.partition(":")
                lines.append(f"{num:>6}: {text}")
            body = truncate_observation("\n".join(lines))
            return ToolResult(observation=f'Matches for "{search_term}" in {path}:\n{body}\n'
                              f'End of matches for "{search_term}" in {path}')
        res = executor.run(f"grep -rIc --fixed-strings --exclude-dir=.git -- {term} {q} 2>/dev/null "
                           f"| grep -v ':0$'")
        counts: list[tuple[str, int]] = []
        for line in res.output.splitlines():
            name, _, count = line.rpartition(":")
            if name and count.isdigit():
                counts.append((name, int(count)))
        if not counts:
            return ToolResult(observation=f'No matches found for "{search_term}" in {path}')
        counts.sort()
        total = sum(c for _, c in counts)
        shown = counts[:MAX_FILES]
        body = "\n".join(f"{name} ({c} match{'es' if c != 1 else ''})" for name, c in shown)
        note = ""
        if len(counts) > MAX_FILES:
            note = (f"\n[... {len(counts) - MAX_FILES} more files not shown: {len(counts)} files matched. "
                    f"Narrow the search with a more specific term or path.]")
        return ToolResult(observation=f'Found {total} matches for "{search_term}" in {path}:\n{body}{note}\n'
                          f'End of matches for "{search_term}" in {path}')
