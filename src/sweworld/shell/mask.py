"""A same-length mask of a bash command that bashlex 0.18 can parse (the router parses the mask).

bashlex rejects or misreads a few constructs that agents write every day. Before parsing, the router
rewrites them into text of EXACTLY the same length, so that every byte offset bashlex reports is an
offset into the original command too (spans are always cut from the original):

- quoted here-document delimiters (``cat <<'EOF' > f.py``: bashlex looks for the terminator with the
  quotes): the delimiter loses its quotes (``<<EOF  ``) and the body, which bash never expands, is
  blanked (its newlines kept);
- comments (outside quotes, at the start of a word) are blanked: a comment-only command is empty;
- ``[[ ... ]]`` (bashlex: unexpected token) becomes ``true`` padded with blanks;
- arithmetic, ``$(( ... ))`` (bashlex: not implemented) becomes ``0...0`` and the command
  ``(( ... ))`` becomes ``true ...``;
- the ``time`` keyword (bashlex: not implemented) becomes ``nice``, a wrapper like ``time``.

A test or arithmetic expression that contains ``$(``, a backtick or a process substitution is left as
it is: bashlex then fails and the command goes to SWT whole. The scanner knows quotes, escapes,
``$(...)`` nesting and here-document bodies; anything it misreads only makes bashlex fail, never a
different parse of well-formed input that agents send.

:func:`parse` is bashlex's parse of the mask.
"""

from __future__ import annotations

import re

_EXEC = re.compile(r"\$\(|`|<\(|>\(")
_COMMAND_POSITION = re.compile(r"(^|[;&|(){}\n!]|\b(?:then|do|else|elif|if|while|until)\s)[ \t]*$")
_TEST_END = re.compile(r"\s\]\](?=\s|$|[;&|)])")
_WORD_END = " \t\n;&|<>()"


class _Scanner:
    def __init__(self, src: str) -> None:
        self.src = src
        self.out = list(src)
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents waiting for the newline

    def blank(self, start: int, end: int, head: str = "") -> None:
        """Replace src[start:end] by ``head`` padded with blanks, keeping newlines."""
        for k in range(start, end):
            off = k - start
            self.out[k] = head[off] if off < len(head) else ("\n" if self.src[k] == "\n" else " ")

    def at_command_position(self, i: int) -> bool:
        return bool(_COMMAND_POSITION.search(self.src[:i]))

    def closing_parens(self, i: int) -> int:
        """``src[i:]`` starts with ``((``: the index just past the matching ``))``, or -1."""
        depth = 0
        for k in range(i, len(self.src)):
            depth += {"(": 1, ")": -1}.get(self.src[k], 0)
            if depth == 0:
                return k + 1 if self.src[k - 1] == ")" and k - 1 > i + 1 else -1
        return -1

    def arithmetic(self, i: int, start: int, head: str) -> int:
        """``(( ... ))`` at i (``$`` at start when an expansion): masked; the index to go on from."""
        end = self.closing_parens(i)
        if end < 0 or _EXEC.search(self.src, i, end):
            return i + 2
        self.blank(start, end, head or "0" * (end - start))
        return end

    def heredoc(self, i: int) -> int:
        src, j = self.src, i + 2
        strip = src.startswith("-", j)
        j += strip
        while j < len(src) and src[j] in " \t":
            j += 1
        start, quoted = j, False
        while j < len(src) and src[j] not in _WORD_END:
            if src[j] in "'\"":
                close = src.find(src[j], j + 1)
                j, quoted = (len(src) if close < 0 else close + 1), True
            else:
                quoted |= src[j] == "\\"
                j += 2 if src[j] == "\\" else 1
        j = min(j, len(src))
        delimiter = re.sub(r"['\"\\]", "", src[start:j])
        if quoted:
            self.blank(start, j, delimiter)
        self.pending.append((delimiter, strip, quoted))
        return j

    def bodies(self, pos: int) -> int:
        """Skip the bodies of the pending here-documents, starting at line ``pos``."""
        src = self.src
        for delimiter, strip, quoted in self.pending:
            body = pos
            while pos < len(src):
                eol = src.find("\n", pos)
                eol = len(src) if eol < 0 else eol
                line = src[pos:eol]
                done = (line.lstrip("\t") if strip else line) == delimiter
                if done and quoted:
                    self.blank(body, pos)
                pos = eol + 1
                if done:
                    break
        self.pending = []
        return pos

    def scan(self) -> str:
        src, i, stack = self.src, 0, []  # stack: '"' or an int, the paren depth inside $( )
        while i < len(src):
            c = src[i]
            if stack and stack[-1] == '"':
                if c == "\\":
                    i += 2
                elif c == '"':
                    stack.pop()
                    i += 1
                elif src.startswith("$((", i):
                    i = self.arithmetic(i + 1, i, "")
                elif src.startswith("$(", i):
                    stack.append(0)
                    i += 2
                else:
                    i += 1
                continue
            i = self.step(i, c, stack)
        return "".join(self.out)

    def step(self, i: int, c: str, stack: list) -> int:
        src = self.src
        if c == "\\":
            return i + 2
        if c == "'":
            close = src.find("'", i + 1)
            return len(src) if close < 0 else close + 1
        if c == '"':
            stack.append('"')
            return i + 1
        if c == "#" and (i == 0 or src[i - 1] in " \t\n;&|()"):
            eol = src.find("\n", i)
            eol = len(src) if eol < 0 else eol
            self.blank(i, eol)
            return eol
        if c == "\n" and self.pending:
            return self.bodies(i + 1)
        if src.startswith("<<<", i):
            return i + 3
        if src.startswith("<<", i):
            return self.heredoc(i)
        if src.startswith("$((", i):
            return self.arithmetic(i + 1, i, "")
        if src.startswith("$(", i):
            stack.append(0)
            return i + 2
        if c in "()" and stack:
            stack[-1] += 1 if c == "(" else -1
            if stack[-1] < 0:
                stack.pop()
            return i + 1
        if c in "(t[" and self.at_command_position(i):
            return self.keyword(i)
        return i + 1

    def keyword(self, i: int) -> int:
        src = self.src
        if src.startswith("((", i):
            return self.arithmetic(i, i, "true")
        if re.match(r"time[ \t]", src[i:]):
            self.blank(i, i + 4, "nice")
            return i + 4
        if re.match(r"\[\[[ \t]", src[i:]):
            end = _TEST_END.search(src, i + 2)
            if end and not _EXEC.search(src, i, end.end()):
                self.blank(i, end.end(), "true")
                return end.end()
        return i + 1


def mask(command: str) -> str:
    """The same-length text that the router hands to bashlex (see the module docstring)."""
    return _Scanner(command).scan()


def parse(command: str) -> tuple[str, list]:
    """(the mask of ``command``, bashlex's trees of it): every offset in the trees is one in ``command``.
    An empty mask (blanks, comments) has no trees; bashlex's errors (of several types) propagate. bashlex
    is imported here, on the first parse: the package's other readers do without it."""
    import bashlex

    masked = mask(command)
    return masked, (bashlex.parse(masked) if masked.strip() else [])
