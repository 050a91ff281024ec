"""A step's diff split into the fix (``patch``) and the tests (``test_patch``), with ``unidiff``.

Each file of the diff goes whole to one side by the language's test rule (``rules.is_test_path``,
Python's, by default); every other file (docs, configuration, data outside test directories) stays
with the fix, as in SWE-bench's rows.
"""

from __future__ import annotations

from collections.abc import Callable

import unidiff

from sweworld.core.errors import RepoError
from sweworld.mine.rules import is_test_path


def _path(pf: unidiff.PatchedFile) -> str:
    name = pf.target_file if pf.target_file != "/dev/null" else pf.source_file
    return name[2:] if name.startswith(("a/", "b/")) else name


def split_diff(diff: str, *, what: str = "", is_test: Callable[[str], bool] = is_test_path) -> tuple[str, str]:
    """(patch, test_patch) of ``diff``; both keep git's headers so that ``git apply`` takes them;
    ``is_test``: the language's test rule (``envs.lang``)."""
    try:
        files = unidiff.PatchSet(diff)
    except unidiff.UnidiffParseError as exc:
        raise RepoError(f"cannot parse the diff of {what or 'a commit'}: {exc}") from exc
    fix, tests = [], []
    for pf in files:
        (tests if is_test(_path(pf)) else fix).append(str(pf))
    return "".join(fix), "".join(tests)


def added_lines(patch: str) -> list[str]:
    """The added lines of ``patch`` (without the ``+``), for the statement's leak check."""
    out = []
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            out.append(line[1:])
    return out
