"""Which tests an agent's diff can change the outcome of.

A test is *affected* when the diff touches code it runs:

1. per-test coverage, where the task has it (``coverage`` on the task row: a ``CoverageMap`` as
   ``sweworld.synth.coverage`` collects it, ``sweworld.covmap``): the tests that executed a changed line (old-side line
   numbers; an insertion counts the lines around it);
2. else the repository's static import graph (``importgraph``): the diff changes a file the test's
   file imports, directly or not;
3. else, with only the test file's text: its imports name a changed module or the package of one;
4. else any change to a non-test Python file.

A change to the test's own file or to a ``conftest.py`` above it always affects it. Files the diff
adds (a reproduction script) affect nothing unless imported.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from sweworld.covmap import CoverageMap
from sweworld.harness.patches import UNIFIED_PAIR, pair_path
from sweworld.surrogates.swt.importgraph import reaches
from sweworld.surrogates.swt.testsource import is_test_file

_GIT_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def file_sections(diff: str) -> list[tuple[str, str]]:
    """(path, text) of each file section of ``diff`` (the text before the first header: path ""): a
    file starts at git's header (``diff --git a/X b/Y``) or, in a plain unified diff (``diff -u``,
    the diffs tools make from search/replace edits), at its ``---``/``+++`` pair; the pair right
    after a git header (no hunk between) belongs to that header's section."""
    heads = sorted([(m.start(), m.group(2), True) for m in _GIT_FILE.finditer(diff)]
                   + [(m.start(), pair_path(m.group(1), m.group(2)), False) for m in UNIFIED_PAIR.finditer(diff)])
    starts: list[tuple[int, str, bool]] = []
    for at, name, git in heads:
        if git or not starts or not starts[-1][2] or "\n@@" in diff[starts[-1][0]:at]:
            starts.append((at, name, git))
    bounds = [0, *(at for at, _, _ in starts), len(diff)]
    names = ["", *(name for _, name, _ in starts)]
    return [(name, diff[a:b]) for name, a, b in zip(names, bounds, bounds[1:], strict=False) if b > a]


def without_scratch(diff: str, also: Iterable[str] = ()) -> str:
    """``diff`` less the files it adds at the repository root (an agent's scratch and reproduction
    scripts: no package or test imports them) and less the paths in ``also``; ``conftest.py`` and
    ``setup.py`` stay."""
    drop = set(also)

    def scratch(path: str, text: str) -> bool:
        return path in drop or (_body(text)[0] and "/" not in path and path not in ("conftest.py", "setup.py"))

    return "".join(text for path, text in file_sections(diff) if not scratch(path, text))


def _body(text: str) -> tuple[bool, list[str]]:
    """(the section adds its file, its lines from the first hunk on) of one file section."""
    head, _, rest = text.partition("\n@@ ")
    added = "\nnew file mode" in "\n" + head or "\n--- /dev/null" in "\n" + head
    return added, ("@@ " + rest).splitlines() if rest else []


def changed_lines(diff: str) -> dict[str, set[int]]:
    """Path -> old-side line numbers the diff removes or inserts next to (empty set: a new file)."""
    out: dict[str, set[int]] = {}
    for path, text in file_sections(diff):
        if not path:
            continue
        out[path] = set()
        added, lines = _body(text)
        line = 0
        for row in [] if added else lines:
            hunk = _HUNK.match(row)
            if hunk:
                line = int(hunk.group(1))
            elif row.startswith("-"):
                out[path].add(line)
                line += 1
            elif row.startswith("+"):
                out[path].update((max(line - 1, 1), line))
            elif row.startswith(" "):
                line += 1
    return out


def change_signature(diff: str) -> dict[str, list[str]]:
    """Path -> the diff's removed and added lines in order (headers, context and hunk positions
    ignored): two diffs with equal signatures make the same change."""
    out = {path: [row.rstrip() for row in _body(text)[1] if row[:1] in "+-"]
           for path, text in file_sections(diff) if path}
    return {p: lines for p, lines in out.items() if lines}


def _test_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def _by_text(test_text: str, changed: Iterable[str]) -> bool:
    """Rule 3: a module the test file imports is named by a changed path (``pkg`` of ``src/pkg/m.py``)."""
    tops = {name.split(".")[0] for name in re.findall(r"^\s*(?:from|import)\s+(\w[\w.]*)", test_text, re.MULTILINE)}
    return any(tops & set(path[:-3].split("/")) for path in changed)


def affected_tests(test_ids: Iterable[str], diff: str, *, graph: Mapping[str, list[str]] | None = None,
                   coverage: CoverageMap | None = None, texts: Mapping[str, str] | None = None) -> set[str]:
    """The tests among ``test_ids`` whose outcome ``diff`` can change (see the module docstring)."""
    changed = changed_lines(diff)
    if not changed:
        return set()
    source = {p: lines for p, lines in changed.items() if p.endswith(".py") and not is_test_file(p)}
    covered: set[str] = set()
    if coverage is not None:
        for path, lines in source.items():
            for n in lines:
                covered.update(coverage.tests_for_lines(path, n, n))
    by_file: dict[str, bool] = {}

    def file_affected(file: str) -> bool:
        """Rules 2-4 and the own-file rule, decided once per test file."""
        if file not in by_file:
            if file in changed or any(posixpath.basename(p) == "conftest.py" and
                                      file.startswith(posixpath.dirname(p)) for p in changed):
                by_file[file] = True
            elif graph and file in graph:
                by_file[file] = bool(reaches(graph, file) & set(source))
            elif texts and file in texts:
                by_file[file] = bool(source) and _by_text(texts[file], source)
            else:
                by_file[file] = bool(source)
        return by_file[file]

    out: set[str] = set()
    for test_id in test_ids:
        file = _test_file(test_id)
        if coverage is not None and test_id in coverage.tests and file not in changed:
            if test_id in covered:
                out.add(test_id)
        elif file_affected(file):
            out.add(test_id)
    return out
