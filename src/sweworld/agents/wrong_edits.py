"""The wrong and partial edits of ``perturb`` (see ``perturb`` for the kinds), built from the lines
a policy viewed around the gold hunks: another mutation of the fixed function, a mutation beside the
bug, some hunks only, a hunk's change made at a similar place. Mutations come from ``mutate``
(``sweworld.synth.mutations_for_file``, passed in: agents do not import the synthesizer); every
candidate's function still parses and its code (not only a comment or a docstring) changed.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from unidiff.patch import Hunk as UHunk

from sweworld.agents.regions import Region, dedent, enclosing_function, function_tree

WRONG_KINDS = ("mutated_fix", "bug_kept", "partial", "wrong_place")
_MAX_PLACES = 3


class MutationLike(Protocol):
    kind: str
    mutated: str


Mutate = Callable[[str, str], Iterable[MutationLike]]
"""``(repo-relative path, module text) -> mutations``: ``sweworld.synth.mutations_for_file``."""


@dataclass
class Hunk:
    """A gold hunk in file lines: ``source``/``target`` from ``start``; ``first..last`` the removed
    lines (for a pure insertion, the line it follows); ``indent`` of the first changed line."""

    start: int
    source: list[str]
    target: list[str]
    first: int
    last: int
    indent: int

    @property
    def end(self) -> int:
        return self.start + len(self.source) - 1

    @classmethod
    def of(cls, hunk: UHunk) -> Hunk:
        removed = [ln.source_line_no for ln in hunk if ln.is_removed]
        prev = hunk.source_start - 1
        for ln in hunk:
            if ln.is_added or ln.is_removed:
                break
            prev = ln.source_line_no
        text = next((ln.value for ln in hunk if (ln.is_added or ln.is_removed) and ln.value.strip()), "")
        return cls(hunk.source_start, [ln.value.rstrip("\n") for ln in hunk if not ln.is_added],
                   [ln.value.rstrip("\n") for ln in hunk if not ln.is_removed], min(removed or [max(prev, 1)]),
                   max(removed or [max(prev, 1)]), len(text) - len(text.lstrip()))


@dataclass
class Site:
    """A viewed window and the gold hunks inside it."""

    rel: str
    region: Region
    hunks: list[Hunk] = field(default_factory=list)

    @staticmethod
    def shift(applied: Sequence[Hunk], hunk: Hunk) -> int:
        """How far ``hunk``'s lines move once ``applied`` (those above it count) are applied."""
        return sum(len(h.target) - len(h.source) for h in applied if h.start < hunk.start)

    def apply(self, hunks: Sequence[Hunk]) -> list[str] | None:
        lines = list(self.region.lines)
        for hunk in sorted(hunks, key=lambda h: -h.start):
            at = self.region.index(hunk.start)
            if lines[at:at + len(hunk.source)] != hunk.source:
                return None
            lines[at:at + len(hunk.source)] = hunk.target
        return lines


def _changed(old: list[str], new: list[str]) -> set[int]:
    ops = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    return {i for tag, a, b, _, _ in ops if tag != "equal" for i in range(a, max(b, a + 1))}


def mutations(lines: list[str], index: int, indent: int, rel: str, mutate: Mutate) -> list[list[str]]:
    """``lines`` with one mutation of the function around ``lines[index]`` (each a new list)."""
    func = enclosing_function(lines, index, indent)
    if func is None:
        return []
    body = lines[func.first:func.last + 1]
    flat = dedent(body, func.prefix)
    out = []
    for mutation in mutate(rel, "\n".join(flat) + "\n"):
        new = mutation.mutated.split("\n")[:-1]
        ops = difflib.SequenceMatcher(a=flat, b=new, autojunk=False).get_opcodes()
        mutated = [x for tag, a, b, c, d in ops for x in (body[a:b] if tag == "equal" else
                   [func.prefix + ln if ln.strip() else ln for ln in new[c:d]])]
        out.append(lines[:func.first] + mutated + lines[func.last + 1:])
    return out


def _word(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def _token_change(old: str, new: str) -> tuple[str, str] | None:
    """``(old_sub, new_sub)``: the changed span of a line widened to whole words (an insertion
    anchored by the word before it)."""
    ops = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return None
    a, b, c, d = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    insertion = a == b
    while insertion and a > 0 and c > 0 and old[a - 1] == " ":  # anchor an insertion by the word before it
        a, c = a - 1, c - 1
    while c > 0 and _word(old, a - 1) and (insertion or _word(old, a) or _word(new, c)):
        a, c = a - 1, c - 1
    while _word(old, b) and ((b > a and _word(old, b - 1)) or (d > c and _word(new, d - 1))):
        b, d = b + 1, d + 1
    return (old[a:b], new[c:d]) if old[a:b].strip() else None


def misplacements(site: Site, hunk: Hunk) -> list[list[str]]:
    """The site with its other hunks fixed and ``hunk``'s change made at a similar place instead
    (most similar or nearest first)."""
    others = [h for h in site.hunks if h is not hunk]
    base = site.apply(others) or site.region.lines
    removed = [s for s in hunk.source if s not in hunk.target]
    added = [t for t in hunk.target if t not in hunk.source]
    at = site.region.index(hunk.first) + site.shift(others, hunk)
    skip = set(range(at, at + hunk.last - hunk.first + 1))
    found: list[tuple[float, list[str]]] = []
    if len(removed) == 1 and len(added) == 1 and (change := _token_change(removed[0], added[0])):
        old, new = change
        pattern = (r"\b" if old[0].isalnum() else "") + re.escape(old) + (r"\b" if old[-1].isalnum() else "")
        for i, line in enumerate(base):
            if i not in skip and re.search(pattern, line):
                lines = [*base[:i], re.sub(pattern, lambda _: new, line, count=1), *base[i + 1:]]
                found.append((-difflib.SequenceMatcher(a=line, b=removed[0]).ratio(), lines))
    elif not removed and added:
        indent = added[0][:len(added[0]) - len(added[0].lstrip())]
        for i, line in enumerate(base):
            if i != at and line.startswith(indent) and line[len(indent):len(indent) + 1].strip():
                found.append((abs(i + 1 - at), base[:i + 1] + added + base[i + 1:]))
    return [lines for _, lines in sorted(found, key=lambda f: f[0]) if _code_changed(base, lines)][:_MAX_PLACES]


def _code_changed(old: list[str], new: list[str]) -> bool:
    """The function around the change parses before and after and its code changed (not only a
    comment, not inside a multi-line string)."""
    at = min(_changed(old, new))
    after = enclosing_function(new, at, len(new[at]) - len(new[at].lstrip()))
    if after is None:
        return False
    before = replace(after, last=after.last - len(new) + len(old))
    trees = function_tree(old, before), function_tree(new, after)
    if trees[0] is None or trees[1] is None or ast.dump(trees[0]) == ast.dump(trees[1]):
        return False
    line = at - after.first + 1
    return not any(isinstance(n, ast.Constant) and isinstance(n.value, str) and n.end_lineno != n.lineno
                   and n.lineno <= line <= (n.end_lineno or 0) for n in ast.walk(trees[1]))


def options(sites: list[Site], mutate: Mutate | None) -> dict[str, list[dict[int, list[str]]]]:
    """Per non-gold kind, the candidate new lines of every site."""
    gold = {i: s.apply(s.hunks) for i, s in enumerate(sites)}
    if any(lines is None for lines in gold.values()):
        return {}
    found: dict[str, list[dict[int, list[str]]]] = {k: [] for k in WRONG_KINDS}
    pairs = [(i, h) for i, s in enumerate(sites) for h in s.hunks]
    if 2 <= len(pairs) <= 4:
        for mask in range(1, 2 ** len(pairs) - 1):
            keep = [h for n, (_, h) in enumerate(pairs) if mask >> n & 1]
            found["partial"].append({i: s.apply([h for h in s.hunks if any(h is k for k in keep)])
                                     for i, s in enumerate(sites)})  # type: ignore[misc]
    seen: set[tuple[str, ...]] = set()

    def add(kind: str, i: int, new: list[str], base: dict[int, list[str]]) -> None:
        if tuple(new) not in seen:
            seen.add(tuple(new))
            found[kind].append({**base, i: new})

    buggy = {i: s.region.lines for i, s in enumerate(sites)}
    for i, hunk in pairs:
        site, fixed, bug = sites[i], gold[i], sites[i].region.lines
        at, fix_lines = site.region.index(hunk.first), _changed(bug, fixed)  # type: ignore[arg-type]
        if mutate is not None:
            shifted = at + site.shift(site.hunks, hunk)
            for new in mutations(fixed, shifted, hunk.indent, site.rel, mutate):  # type: ignore[arg-type]
                if new != bug:
                    add("mutated_fix", i, new, gold)  # type: ignore[arg-type]
            for new in mutations(bug, at, hunk.indent, site.rel, mutate):
                if not _changed(bug, new) & fix_lines:
                    add("bug_kept", i, new, buggy)
        for new in misplacements(site, hunk):
            add("wrong_place", i, new, gold)  # type: ignore[arg-type]
    return found


