"""Keep observations short: head and tail survive, the middle is cut with a marker saying how much."""

from __future__ import annotations

MAX_CHARS = 10_000
MAX_LINES = 400


def truncate_observation(text: str, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES) -> str:
    """Cap ``text`` at ``max_lines`` lines and ``max_chars`` characters, keeping head and tail.

    Each cut leaves one marker line, e.g. ``[... 1200 lines cut ...]`` or
    ``[... 53000 characters cut ...]``; text within both limits is returned unchanged.
    """
    lines = text.split("\n")
    if max_lines > 0 and len(lines) > max_lines:
        head = max_lines // 2
        tail = max_lines - head
        cut = len(lines) - max_lines
        text = "\n".join([*lines[:head], f"[... {cut} lines cut ...]", *lines[len(lines) - tail:]])
    if max_chars > 0 and len(text) > max_chars:
        head = max_chars // 2
        tail = max_chars - head
        cut = len(text) - max_chars
        text = f"{text[:head]}\n[... {cut} characters cut ...]\n{text[len(text) - tail:]}"
    return text
