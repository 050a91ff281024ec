"""Shell command lists split into their simple commands (for reading install commands)."""

from __future__ import annotations

from sweworld.shell.lexer import segments


def command_segments(command: str) -> list[str]:
    """The simple commands of a shell list (split at unquoted ``;``, ``&&`` and ``||``), stripped: the
    one lexer's :func:`sweworld.shell.lexer.segments` (escapes, comments and here-document bodies never
    split a command)."""
    return segments(command)


__all__ = ["command_segments"]
