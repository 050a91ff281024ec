"""Task synthesis from real repositories: procedural bug injection.

- ``candidates``: where a bug may go (functions of non-test modules, exact source offsets).
- ``mutations``: the mutation kinds, each a site finder over one function.
- here: the public API. ``KINDS[name](path, text)`` yields one :class:`Mutation` per site;
  ``mutations_for_file``, ``sample_mutations`` (deterministic for a seed), ``combine`` (2-3 bugs
  of one file at once) and ``fix_patch`` (the SWE-bench ``patch``: the diff that removes the bug).
"""

from __future__ import annotations

import difflib
import hashlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache, partial

from pydantic import BaseModel, ConfigDict

from sweworld import pyast
from sweworld.synth.candidates import SourceFile, apply_edits, is_test_path
from sweworld.synth.mutations import FINDERS

__all__ = [
    "KINDS",
    "Mutation",
    "combine",
    "file_diff",
    "fix_patch",
    "is_test_path",
    "mutations_for_file",
    "sample_mutations",
]

_MAX_COMBINED = 3


class Mutation(BaseModel):
    """One injected bug (or a combination of bugs) in one file of a repository."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """The mutation kind (a key of ``KINDS``, or ``"combine"``)."""
    path: str
    """The mutated file, relative to the repository root (POSIX separators)."""
    function: str
    """Qualified name of the mutated function (``Class.method`` or ``func``; comma-joined if combined)."""
    lineno: int
    """First line (1-based) of the change in the original file."""
    description: str
    """What changed, for internal records only: never shown to an agent."""
    original: str
    """The whole original file text."""
    mutated: str
    """The whole mutated file text."""
    edits: tuple[tuple[int, int, str], ...] = ()
    """Character-offset edits ``(start, end, replacement)`` that turn ``original`` into ``mutated``."""
    components: tuple[str, ...] = ()
    """For a combined mutation: the kinds it combines, in order."""

    @property
    def key(self) -> str:
        """A short stable identifier: file, line, kind and a hash of the mutated text."""
        digest = hashlib.sha1(self.mutated.encode("utf-8")).hexdigest()[:8]
        return f"{self.path}:{self.lineno}:{self.kind}:{digest}"

    @property
    def lines(self) -> tuple[int, int]:
        """First and last line (1-based, of the original) that the edits touch."""
        starts = [self.original.count("\n", 0, start) + 1 for start, _, _ in self.edits]
        ends = [self.original.count("\n", 0, max(start, end - 1)) + 1 for start, end, _ in self.edits]
        return (min(starts), max(ends)) if self.edits else (self.lineno, self.lineno)


@lru_cache(maxsize=8)
def _source(text: str) -> SourceFile | None:
    try:
        return SourceFile(text)
    except (SyntaxError, ValueError):
        return None


def _parses(text: str) -> bool:
    try:
        pyast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _mutate(path: str, text: str, names: Sequence[str]) -> Iterator[Mutation]:
    if not path.endswith(".py") or is_test_path(path):
        return
    src = _source(text)
    if src is None:
        return
    seen: set[str] = set()  # one mutation per distinct mutated text (the first kind/site wins)
    for name in names:
        for func in src.functions:
            start, end = func.scope  # a definition parses alone (under "if 1:" if indented)
            sites = sorted(FINDERS[name](src, func), key=lambda site: min(site[2])[:2])  # source order
            for lineno, description, edits in sites:
                mutated = apply_edits(text, edits)
                local = apply_edits(text[start:end], [(s - start, e - start, new) for s, e, new in edits])
                if mutated == text or mutated in seen:
                    continue
                seen.add(mutated)
                if _parses(f"if 1:\n{local}" if local[:1] in " \t" else local):
                    yield Mutation(
                        kind=name, path=path, function=func.qualname, lineno=lineno,
                        description=description, original=text, mutated=mutated, edits=tuple(edits),
                    )  # fmt: skip


KINDS: dict[str, Callable[[str, str], Iterator[Mutation]]] = {
    name: partial(_mutate, names=[name]) for name in FINDERS
}
"""Kind name -> ``kind(path, text)`` yielding one mutation per applicable site, in source order."""


def mutations_for_file(path: str, text: str, kinds: Sequence[str] | None = None) -> list[Mutation]:
    """All mutations of one file for ``kinds`` (default: all), in kind order then source order.

    Test files, non-Python files and files that do not parse give none. A mutated text already
    produced by an earlier kind is not repeated.
    """
    names = list(KINDS) if kinds is None else list(kinds)
    unknown = [name for name in names if name not in KINDS]
    if unknown:
        raise ValueError(f"unknown mutation kind(s) {unknown}; known kinds: {', '.join(KINDS)}")
    return list(_mutate(path, text, names))


def sample_mutations(
    files: Mapping[str, str],
    *,
    seed: int,
    max_per_kind: int | None = None,
    kinds: Sequence[str] | None = None,
) -> list[Mutation]:
    """Mutations of ``files`` (path -> text), at most ``max_per_kind`` of each kind, shuffled.

    Deterministic: the same files, seed and options give the same list in the same order
    (files are visited in sorted path order; picks come from ``random.Random(seed)``).
    """
    names = list(KINDS) if kinds is None else list(kinds)
    pool: dict[str, list[Mutation]] = {name: [] for name in names}
    for path in sorted(files):
        for mutation in mutations_for_file(path, files[path], names):
            pool[mutation.kind].append(mutation)
    rng = random.Random(seed)
    picked: list[Mutation] = []
    for name in names:
        items = pool[name]
        if max_per_kind is not None and len(items) > max_per_kind:
            items = [items[i] for i in sorted(rng.sample(range(len(items)), max_per_kind))]
        picked.extend(items)
    rng.shuffle(picked)
    return picked


def combine(mutations: Sequence[Mutation], k: int | None = None) -> Mutation:
    """One mutation applying ``k`` (2 or 3; default: as many as given, at most 3) of ``mutations`` at once.

    All must be of the same file. They are taken greedily in the given order, skipping one whose
    lines overlap those already taken or whose addition would not parse. Raises ``ValueError``
    when fewer than ``k`` compatible mutations are found.
    """
    want = min(len(mutations), _MAX_COMBINED) if k is None else k
    if not 2 <= want <= _MAX_COMBINED:
        raise ValueError(f"combine() takes 2 or 3 mutations, asked for {want}")
    paths = {(m.path, m.original) for m in mutations}
    if len(paths) != 1:
        raise ValueError(f"combine() needs mutations of one file, got {sorted(p for p, _ in paths)}")
    chosen: list[Mutation] = []
    for mutation in mutations:
        first, last = mutation.lines
        if not mutation.edits or any(first <= c.lines[1] and c.lines[0] <= last for c in chosen):
            continue
        if _parses(apply_edits(mutation.original, [e for m in [*chosen, mutation] for e in m.edits])):
            chosen.append(mutation)
        if len(chosen) == want:
            break
    if len(chosen) < want:
        raise ValueError(f"only {len(chosen)} of {len(mutations)} mutations are compatible, need {want}")
    edits = tuple(sorted(e for m in chosen for e in m.edits))
    base = chosen[0]
    return Mutation(
        kind="combine",
        path=base.path,
        function=",".join(dict.fromkeys(m.function for m in chosen)),
        lineno=min(m.lineno for m in chosen),
        description="; ".join(f"{m.kind}: {m.description}" for m in chosen),
        original=base.original,
        mutated=apply_edits(base.original, edits),
        edits=edits,
        components=tuple(m.kind for m in chosen),
    )


def _git_lines(text: str) -> list[str]:
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    return [*out, lines[-1]] if lines[-1] else out


def file_diff(path: str, old: str, new: str) -> str:
    """The git-style unified diff of one file from ``old`` to ``new`` (``old`` empty: a new file)."""
    body = []
    for line in difflib.unified_diff(
        _git_lines(old), _git_lines(new), f"a/{path}" if old else "/dev/null", f"b/{path}", n=3
    ):
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return f"diff --git a/{path} b/{path}\n" + ("" if old else "new file mode 100644\n") + "".join(body)


def fix_patch(mutation: Mutation) -> str:
    """The git-style unified diff that turns ``mutated`` back into ``original`` (the FIX)."""
    return file_diff(mutation.path, mutation.mutated, mutation.original)
