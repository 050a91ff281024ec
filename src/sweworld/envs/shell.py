"""Shell command lists split into their simple commands (for reading install commands)."""

from __future__ import annotations


def command_segments(command: str) -> list[str]:
    """The simple commands of a shell list (split at unquoted ``;``, ``&&`` and ``||``), stripped."""
    out, current, quote, i = [], "", None, 0
    while i < len(command):
        char = command[i]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ";" or command.startswith(("&&", "||"), i):
            out.append(current)
            current, i = "", i + (1 if char == ";" else 2)
            continue
        current += char
        i += 1
    return [part.strip() for part in [*out, current] if part.strip()]
