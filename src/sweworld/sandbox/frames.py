"""The host side of the agent's wire format (see ``agent.py``): frames of named raw-byte fields.

A frame is a line with the number of fields, then per field a line ``NAME SIZE`` and SIZE bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO


def encode(msg: Mapping[str, object]) -> bytes:
    parts = [b"%d\n" % sum(value is not None for value in msg.values())]
    for key, value in msg.items():
        if value is None:
            continue
        if isinstance(value, bool):
            raw = b"1" if value else b"0"
        elif isinstance(value, bytes):
            raw = value
        else:
            raw = str(value).encode("utf-8", "surrogateescape")
        parts += [b"%s %d\n" % (key.encode(), len(raw)), raw]
    return b"".join(parts)


def decode(stream: IO[bytes]) -> dict[str, bytes] | None:
    """Read one frame; ``None`` at end of stream."""
    header = stream.readline()
    if not header.strip():
        return None
    msg = {}
    for _ in range(int(header)):
        key, size = stream.readline().split()
        data = stream.read(int(size))
        if len(data) != int(size):
            raise EOFError("truncated frame")
        msg[key.decode()] = data
    return msg
