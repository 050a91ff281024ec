"""The text filters a predicted output is commonly piped through: ``tail``, ``head``, ``grep``,
``wc -l``, ``cat``, ``sort``, ``uniq``; applied in Python so that ``pytest ... | tail -15`` can be
answered whole (the pipeline's exit code is its last command's, as in bash without pipefail).

``apply_filters(text, filters) -> (text, exit_code, understood)``; a filter it does not know leaves
the text as it is and ``understood`` False.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def _count(args: Sequence[str], default: int = 10) -> tuple[int, bool]:
    """(N, from_start) of ``-N``, ``-n N``, ``-nN``, ``-n +N``, ``--lines=N``."""
    value = ""
    for i, arg in enumerate(args):
        if re.fullmatch(r"-\d+", arg):
            value = arg[1:]
        elif arg == "-n" and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        elif arg.startswith("--lines="):
            value = arg[8:]
    plus = value.startswith("+")
    digits = value.lstrip("+-")
    return (int(digits) if digits.isdigit() else default), plus


def _tail(lines: list[str], args: Sequence[str]) -> list[str]:
    n, from_start = _count(args)
    if from_start:
        return lines[max(n - 1, 0):]
    return lines[-n:] if n else []


def _head(lines: list[str], args: Sequence[str]) -> list[str]:
    n, _ = _count(args)
    return lines[:n]


def _grep(lines: list[str], args: Sequence[str]) -> tuple[list[str], int] | None:
    flags, patterns, rest = set(), [], []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-e" and i + 1 < len(args):
            patterns.append(args[i + 1])
            i += 1
        elif arg.startswith("-") and len(arg) > 1 and not patterns and not rest:
            flags |= set(arg[1:])
        else:
            rest.append(arg)
        i += 1
    if not patterns and rest:
        patterns.append(rest.pop(0))
    if rest or not patterns or flags - set("viEFnc"):
        return None  # a file argument or an option not understood
    regexes = []
    for pattern in patterns:
        if "F" in flags:
            pattern = re.escape(pattern)
        elif "E" not in flags:  # basic regular expressions: \| \( \) \+ \? are the operators
            pattern = re.sub(r"\\?[|()+?{}]", lambda m: m[0][1] if len(m[0]) == 2 else "\\" + m[0], pattern)
        try:
            regexes.append(re.compile(pattern, re.IGNORECASE if "i" in flags else 0))
        except re.error:
            regexes.append(re.compile(re.escape(pattern)))
    hits = [(k, line) for k, line in enumerate(lines, 1)
            if any(r.search(line.rstrip("\n")) for r in regexes) != ("v" in flags)]
    if "c" in flags:
        return [f"{len(hits)}\n"], 0 if hits else 1
    lines = [line if line.endswith("\n") else line + "\n" for _, line in hits]
    return [f"{k}:{line}" if "n" in flags else line for (k, _), line in zip(hits, lines, strict=True)], 0 if hits else 1


def apply_filter(text: str, words: Sequence[str]) -> tuple[str, int] | None:
    """``text`` through one filter command (None: not understood)."""
    name, args = (words[0].rsplit("/", 1)[-1], list(words[1:])) if words else ("", [])
    lines = text.splitlines(keepends=True)
    if name == "tail" and not [a for a in args if not a.startswith(("-", "+")) and not a.isdigit()]:
        return "".join(_tail(lines, args)), 0
    if name == "head" and not [a for a in args if not a.startswith("-") and not a.isdigit()]:
        return "".join(_head(lines, args)), 0
    if name in ("grep", "egrep", "fgrep"):
        extra = {"egrep": ["-E"], "fgrep": ["-F"]}.get(name, [])
        got = _grep(lines, [*extra, *args])
        return None if got is None else ("".join(got[0]), got[1])
    if name == "wc" and args == ["-l"]:
        return f"{len(lines)}\n", 0
    if name == "cat" and not args:
        return "".join(lines), 0
    if name == "sort" and not args:
        return "".join(sorted(lines)), 0
    if name == "uniq" and not args:
        return "".join(line for k, line in enumerate(lines) if k == 0 or lines[k - 1] != line), 0
    return None


def apply_filters(text: str, filters: Sequence[Sequence[str]], exit_code: int) -> tuple[str, int, bool]:
    """``text`` through each filter in turn: (text, exit code of the pipeline, all understood)."""
    understood = True
    for words in filters:
        got = apply_filter(text, words)
        if got is None:
            understood = False
            continue
        text, exit_code = got
    return text, exit_code, understood
