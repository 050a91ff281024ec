"""One lexer for bash commands: words (quotes kept), operators, comments and here-document bodies, with
their offsets in the command, and the two splits the readers make of them.

:func:`tokens` knows quotes, backslashes, comments (at a word's start), ``$(( ))`` and here-document
bodies (the lines after the command, up to the delimiter, are one token and never commands). ``operators``
picks the operators it recognises (longest match): a reader that keeps redirections inside its words
(``READER``) leaves ``>`` and ``<`` out, and they stay word characters. :func:`unquote` is quote removal.

- :func:`simple_commands`: (the operator before it, its words) of each simple command, quotes removed;
- :func:`segments`: the text of each command of a list cut at ``;``, ``&&`` and ``||`` (pipes kept).

This is a lexer, not a parser: compound commands (``if``, loops, groups) come out as the words and
operators they are made of; :mod:`sweworld.shell.mask` and bashlex parse them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sweworld.shell.words import CONTROL_OPERATORS, HEREDOCS, HERESTRING, OPERATORS

WORD, OPERATOR, COMMENT, HEREDOC = "word", "operator", "comment", "heredoc"
BLANKS = " \t\r"
ALL = OPERATORS
READER = CONTROL_OPERATORS | HEREDOCS | {HERESTRING, ">&", "<&"}
"""The operators of a reader that keeps redirections inside its words (``2>/dev/null``, ``>out``,
``2>&1``): ``&>`` is not one of them, so that ``&`` ends a command there (its readers refuse it)."""
CUTS = frozenset({";", "&&", "||", ";;", ";&", ";;&"})
"""Where :func:`segments` cuts a list."""


@dataclass(frozen=True)
class Token:
    """``text`` is ``command[start:end]``, quotes and escapes kept; ``kind`` is word, operator, comment or
    heredoc (a here-document's body, its delimiter line included)."""

    text: str
    start: int
    end: int
    kind: str

    @property
    def word(self) -> str:
        return unquote(self.text)


class _Lexer:
    def __init__(self, src: str, operators: Iterable[str], strict: bool) -> None:
        self.src, self.strict = src, strict
        self.ops = sorted(operators, key=len, reverse=True)
        self.starts = {op[0] for op in self.ops}
        self.out: list[Token] = []
        self.pending: list[tuple[str, bool]] = []  # here-documents waiting for the newline: delimiter, <<-

    def operator(self, i: int) -> str:
        if self.src[i] in self.starts:
            for op in self.ops:
                if self.src.startswith(op, i):
                    return op
        return ""

    def emit(self, kind: str, start: int, end: int) -> None:
        last = self.out[-1] if self.out else None
        if kind == WORD and last is not None and last.kind == OPERATOR and last.text in HEREDOCS:
            self.pending.append((unquote(self.src[start:end]), last.text == "<<-"))
        self.out.append(Token(self.src[start:end], start, end, kind))

    def quoted(self, i: int) -> int:
        """``src[i]`` opens a quote: the index just past its close (the end of input when not strict)."""
        src, quote = self.src, self.src[i]
        j = i + 1
        while j < len(src) and src[j] != quote:
            j += 2 if quote == '"' and src[j] == "\\" else 1
        if j >= len(src):
            if self.strict:
                raise ValueError("No closing quotation")
            return len(src)
        return j + 1

    def arithmetic(self, i: int) -> int:
        """``$((`` at i: the index past its ``))``, or i + 1 when it does not close."""
        depth = 0
        for k in range(i + 1, len(self.src)):
            depth += {"(": 1, ")": -1}.get(self.src[k], 0)
            if depth == 0:
                return k + 1 if self.src[k - 1] == ")" else i + 1
        return i + 1

    def word_end(self, i: int) -> int:
        src = self.src
        while i < len(src) and src[i] not in BLANKS and not self.operator(i):
            if src[i] in "'\"":
                i = self.quoted(i)
            elif src[i] == "\\":
                i += 2
            elif src.startswith("$((", i):
                i = self.arithmetic(i)
            else:
                i += 1
        return min(i, len(src))

    def bodies(self, pos: int) -> int:
        """The pending here-documents' bodies from line ``pos`` on, one token each: the index after them."""
        src = self.src
        for delimiter, strip in self.pending:
            start = pos
            while pos < len(src):
                eol = src.find("\n", pos)
                eol = len(src) if eol < 0 else eol
                line = src[pos:eol]
                pos = eol + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
            if min(pos, len(src)) > start:
                self.out.append(Token(src[start:min(pos - 1, len(src))], start, min(pos - 1, len(src)), HEREDOC))
        self.pending = []
        return min(pos, len(src))

    def run(self) -> list[Token]:
        src, i = self.src, 0
        while i < len(src):
            if src[i] in BLANKS or src.startswith("\\\n", i):
                i += 1 if src[i] in BLANKS else 2
            elif src[i] == "#":
                end = src.find("\n", i)
                end = len(src) if end < 0 else end
                self.emit(COMMENT, i, end)
                i = end
            elif op := self.operator(i):
                self.emit(OPERATOR, i, i + len(op))
                i += len(op)
                if op == "\n" and self.pending:
                    i = self.bodies(i)
            else:
                end = self.word_end(i)
                self.emit(WORD, i, end)
                i = end
        return self.out


def tokens(command: str, operators: Iterable[str] = ALL, *, strict: bool = True) -> list[Token]:
    """The tokens of ``command`` (see the module docstring). An unclosed quote: ValueError when ``strict``,
    else the word runs to the end."""
    return _Lexer(command, operators, strict).run()


def unquote(word: str) -> str:
    """Quote removal: quotes dropped, backslash escapes resolved (in double quotes only before
    ``\\ " $ ` newline``), a backslash-newline removed."""
    out: list[str] = []
    quote, i = "", 0
    while i < len(word):
        c = word[i]
        if quote == "'":
            quote = "" if c == "'" else quote
            out += [] if c == "'" else [c]
        elif c == "\\" and i + 1 < len(word) and (not quote or word[i + 1] in '\\"$`\n'):
            i += 1
            out += [] if word[i] == "\n" else [word[i]]
        elif c == '"' or (c == "'" and not quote):
            quote = "" if quote else c
        else:
            out.append(c)
        i += 1
    return "".join(out)


def simple_commands(command: str, *, strict: bool = False) -> list[tuple[str, list[str]]]:
    """(the operator before it, its words) of each simple command of ``command``, split at every control
    operator (newlines too), quotes removed; redirections stay words (``2>/dev/null``, ``>``), comments
    and here-document bodies are dropped. An unclosed quote: ValueError with ``strict``, else the
    command split at blanks."""
    try:
        found = tokens(command, READER)
    except ValueError:
        if strict:
            raise
        return _plain_split(command)
    out: list[tuple[str, list[str]]] = [("", [])]
    glued = -1  # where the last word ended: a token that starts there is part of it
    for token in found:
        if token.kind == OPERATOR and token.text in CONTROL_OPERATORS:
            out.append((token.text, []))
        elif token.kind in (WORD, OPERATOR):
            words = out[-1][1]
            if words and token.start == glued:
                words[-1] += token.text
            else:
                words.append(token.text)
            glued = token.end
    return [(op, [unquote(w) for w in words]) for op, words in out if words]


def _plain_split(command: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = [("", [])]
    for word in command.replace("\n", " ; ").split():
        if set(word) <= set(";&|"):
            out.append((word, []))
        else:
            out[-1][1].append(word)
    return [(op, words) for op, words in out if words]


def segments(command: str) -> list[str]:
    """The commands of a list cut at unquoted ``;``, ``&&`` and ``||`` (pipes, ``&`` and newlines kept
    inside), each as written from its first token to its last; an unclosed quote runs to the end."""
    out: list[list[Token]] = [[]]
    for token in tokens(command, strict=False):
        if token.kind == OPERATOR and token.text in CUTS:
            out.append([])
        elif token.text != "\n":
            out[-1].append(token)
    return [command[part[0].start:part[-1].end] for part in out if part]
