"""The words and operators bash gives a meaning: assignments, reserved words, the builtins that can change
the shell, and the operators the lexer knows. Every reader of commands takes them from here."""

from __future__ import annotations

import re
from collections.abc import Sequence

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
"""A shell variable's name (a pattern, for building expressions)."""

ASSIGNMENT = re.compile(NAME + r"\+?=")
"""The head of an assignment word, ``NAME=`` or ``NAME+=`` (bash takes both), matched at a word's start."""


def is_assignment(word: str) -> bool:
    """True when ``word`` is a variable assignment (``X=1``, ``PATH+=:/x``, ``X=``)."""
    return ASSIGNMENT.match(word) is not None


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


RESERVED = _names("! case coproc do done elif else esac fi for function if in select then time until while { } [[ ]]")
"""bash's reserved words: a keyword only as a command word, never a program."""

STATE_BUILTINS = _names(
    "alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown enable "
    "eval exec exit export fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd "
    "read readarray readonly return set shift shopt source suspend times trap type typeset ulimit umask unalias "
    "unset wait .")
"""bash's builtins that can change the shell or run code in it (``cd``, ``export``, ``set``, ``exit``,
``source``, ``eval``, ``read``...); ``echo``, ``true``, ``false``, ``test``, ``[``, ``pwd`` and ``:`` are the
builtins left out: they cannot."""

SHELL_WORDS = STATE_BUILTINS | RESERVED
"""A command word that can change the shell it runs in: a state builtin or a reserved word (a loop's
variable, a group, a function definition...)."""

SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "\n"})
"""The operators that end a simple command while the list goes on in the same shell."""
BACKGROUND = "&"
CASE_ENDS = frozenset({";;", ";&", ";;&"})
CONTROL_OPERATORS = SEPARATORS | {BACKGROUND} | CASE_ENDS
"""Every operator that ends a simple command."""

REDIRECTIONS = frozenset({">", ">>", "<", ">&", "<&", "&>", "&>>", ">|", "<>"})
"""The redirection operators that take a word (a file, or a descriptor) as their target."""
HEREDOCS = frozenset({"<<", "<<-"})
"""The here-document operators: their word is the delimiter, their body the lines after the command."""
HERESTRING = "<<<"
GROUPING = frozenset({"(", ")", "<(", ">("})
"""Subshells, groups of a ``case`` pattern, and process substitutions."""

OPERATORS = CONTROL_OPERATORS | REDIRECTIONS | HEREDOCS | {HERESTRING} | GROUPING
"""Every operator of bash's lexer (the longest one that fits is taken)."""

_REDIRECTION = re.compile(r"\d*(?:" + "|".join(
    map(re.escape, sorted(REDIRECTIONS | HEREDOCS | {HERESTRING}, key=lambda op: (-len(op), op)))) + ")")


def redirection_target(word: str) -> str | None:
    """For a word that holds a redirection (a reader that keeps them in its words: ``2>/dev/null``,
    ``>``, ``2>&1``, ``<<EOF``): its target, '' when the target is the next word; None for any other word."""
    found = _REDIRECTION.match(word)
    return None if found is None else word[found.end():]


def without_redirections(words: Sequence[str]) -> list[str]:
    """``words`` without the redirections kept in them (and the targets that follow a bare operator)."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif (target := redirection_target(word)) is None:
            out.append(word)
        else:
            skip = target == ""
    return out


def program(words: Sequence[str]) -> list[str]:
    """The words of a simple command from its command word on: the assignments and redirections before
    it dropped (``X=1 2>/dev/null ls -la`` -> ``ls -la``)."""
    k = 0
    while k < len(words):
        target = redirection_target(words[k])
        if target is None and not is_assignment(words[k]):
            break
        k += 2 if target == "" else 1
    return list(words[k:])
