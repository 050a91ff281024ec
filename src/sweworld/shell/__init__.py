"""One home for what sweworld knows about bash commands, so that every reader of a command reads it alike.

A ground floor (the standard library and bashlex, nothing of sweworld above ``core``'s errors, types and
paths), importable by every package:

- ``words``: the one assignment pattern (``NAME=`` and ``NAME+=``), the reserved words, the builtins that
  can change the shell, the operators;
- ``lexer``: the one lexer (quotes, escapes, comments, here-document bodies) and the splits made of it:
  simple commands with their words, and the segments of a list;
- ``mask``: the same-length mask that lets bashlex parse what agents write, and bashlex's parse of it
  (``parse``; the function ``mask`` is ``sweworld.shell.mask.mask``: the package's ``mask`` is the module);
- ``plain`` and ``check``: ``bash -n`` on the host (``syntax_check``), with the fast path for plainly valid
  commands (``plainly_valid``).

Readers: the install-command reader (``envs.shell``), the world's router and code reader
(``world.router``, ``world.commands``), the integrations' shell-state and swerex syntax checks.
"""

from __future__ import annotations

from sweworld.shell.check import SyntaxCheck, closers, syntax_check
from sweworld.shell.lexer import Token, segments, simple_commands, tokens, unquote
from sweworld.shell.mask import parse
from sweworld.shell.plain import plainly_valid
from sweworld.shell.words import (
    ASSIGNMENT,
    CONTROL_OPERATORS,
    OPERATORS,
    REDIRECTIONS,
    RESERVED,
    SEPARATORS,
    SHELL_WORDS,
    STATE_BUILTINS,
    is_assignment,
    program,
)

__all__ = [
    "ASSIGNMENT",
    "CONTROL_OPERATORS",
    "OPERATORS",
    "REDIRECTIONS",
    "RESERVED",
    "SEPARATORS",
    "SHELL_WORDS",
    "STATE_BUILTINS",
    "SyntaxCheck",
    "Token",
    "closers",
    "is_assignment",
    "parse",
    "plainly_valid",
    "program",
    "segments",
    "simple_commands",
    "syntax_check",
    "tokens",
    "unquote",
]
