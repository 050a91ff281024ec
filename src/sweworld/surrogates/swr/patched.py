"""A patch applied to the base files in memory: what the patched files say, with no environment.

``FileSource`` reads a repository-relative path of the base tree (None: no such file).
``apply_patch_text(patch, read)`` returns a :class:`Patched`: per file the base text and the
patched text (None: absent, the patch deletes or did not create it), which files are new, and
whether every hunk applied. Hunks are matched line by line (trailing whitespace kept, final newline
ignored) at their stated place, else at the nearest place holding the same lines, as ``patch``
finds an offset; a hunk found nowhere leaves ``applied`` False. Sources: ``tree_source(root)``
(a base tree on disk, e.g. ``RepoStore().base_tree(task)``) and ``executor_source(executor)``
(an episode of the base commit, read through the ``Executor`` protocol).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from sweworld.core.errors import SWEWorldError
from sweworld.core.executor import Executor

if TYPE_CHECKING:
    from sweworld.world.testfiles import Inspects

FileSource = Callable[[str], "str | None"]


@dataclass
class Patched:
    """The files a patch touches, before and after (see the module docstring)."""

    base: dict[str, str | None] = field(default_factory=dict)
    after: dict[str, str | None] = field(default_factory=dict)
    origin: dict[str, list[int | None]] = field(default_factory=dict)
    added: set[str] = field(default_factory=set)
    applied: bool = True
    parsed: bool = True

    @property
    def paths(self) -> list[str]:
        return list(self.after)

    def touched(self, path: str) -> set[int]:
        """Base line numbers the patch removes or inserts next to."""
        origin = self.origin.get(path, [])
        kept = {n for n in origin if n is not None}
        removed = set(range(1, len(split_lines(self.base.get(path))) + 1)) - kept
        near = {n for i, o in enumerate(origin) if o is None
                for n in (origin[i - 1] if i else None, origin[i + 1] if i + 1 < len(origin) else None) if n}
        return removed | near


def split_lines(text: str | None) -> list[str]:
    """Lines split at ``\\n`` only, as diffs count them (not at form feeds or ``\\u2028``)."""
    lines = (text or "").split("\n")
    return lines[:-1] if lines and not lines[-1] else lines


def _lines(hunk, keep: str) -> list[str]:
    return [line.value.rstrip("\n") for line in hunk if line.line_type in (" ", keep)]


def _find(lines: list[str], source: list[str], expected: int) -> int | None:
    """Where ``source`` lies in ``lines``: at ``expected`` or the nearest place."""
    n = len(source)
    if not n:
        return min(max(expected, 0), len(lines))
    last = len(lines) - n
    for delta in range(max(expected, last - expected, 0) + 1):
        for at in (expected - delta, expected + delta):
            if 0 <= at <= last and lines[at] == source[0] and lines[at:at + n] == source:
                return at
    return None


def apply_hunks(text: str | None, hunks) -> tuple[str, list[int | None], bool]:
    """``text`` with ``hunks`` applied (hunks that match nowhere skipped), the base line number
    (1-based) of each line of the result (None: inserted), and whether every hunk applied."""
    lines = split_lines(text)
    origin: list[int | None] = list(range(1, len(lines) + 1))
    offset, ok = 0, True
    for hunk in hunks:
        source, target = _lines(hunk, "-"), _lines(hunk, "+")
        at = _find(lines, source, hunk.source_start - 1 + offset if source else hunk.source_start + offset)
        if at is None:
            ok = False
            continue
        new_origin, i = [], 0
        for line in hunk:
            if line.line_type == "+":
                new_origin.append(None)
            elif line.line_type in " -":
                if line.line_type == " ":
                    new_origin.append(origin[at + i])
                i += 1
        lines[at:at + len(source)] = target
        origin[at:at + len(source)] = new_origin
        offset = at - (hunk.source_start - 1) + len(target) - len(source)
    return "\n".join(lines) + ("\n" if lines else ""), origin, ok


def _patchset(patch: str) -> PatchSet | None:
    try:
        return PatchSet(patch or "")
    except UnidiffParseError:
        return None


def apply_patch_text(patch: str, read: FileSource) -> Patched:
    """The files ``patch`` touches, read through ``read`` and patched (see the module docstring)."""
    out = Patched()
    files = _patchset(patch)
    if files is None:
        return Patched(applied=False, parsed=False)
    for patched in files:
        path = patched.path
        base = None if patched.is_added_file else read(path)
        out.base[path] = base
        if patched.is_added_file:
            out.added.add(path)
        if patched.is_removed_file:
            out.after[path] = None
            out.applied &= base is not None
            continue
        if base is None and not patched.is_added_file:
            out.after[path], out.applied = None, False
            continue
        out.after[path], out.origin[path], ok = apply_hunks(base, patched)
        out.applied &= ok
    return out


def tree_source(root: str | Path) -> FileSource:
    """Files of a base tree on disk (cached: base trees are read-only)."""
    root = Path(root)

    @lru_cache(maxsize=512)
    def read(path: str) -> str | None:
        file = root / path
        try:
            return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None
        except OSError:
            return None

    return read


def executor_source(executor: Executor | Inspects) -> FileSource:
    """Files read through ``executor`` (a workspace of the base commit, or a base tree read in place:
    ``testfiles.Inspects``; paths relative to its workdir)."""

    def read(path: str) -> str | None:
        try:
            return executor.read_file(path)
        except (SWEWorldError, OSError, UnicodeDecodeError):
            return None

    return read
