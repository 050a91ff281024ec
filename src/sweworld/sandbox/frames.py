"""The frames between the host and the in-sandbox server: a line with the number of fields, then
per field a line ``NAME SIZE`` and SIZE raw bytes.

Standard library only and no package imports: ``server.py`` loads it beside itself inside the
sandbox; the host (``session``, ``isolation``) imports it as ``sweworld.sandbox.frames``.
"""


def read_msg(stream):
    """One frame as {name: bytes}; None at end of stream. (The host imports this too.)"""
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


def encode_msg(msg):
    """One frame; fields whose value is None are left out. (The host imports this too.)"""
    parts = [b""]
    for key, value in msg.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = b"1" if value else b"0"
        elif not isinstance(value, bytes):
            value = str(value).encode("utf-8", "surrogateescape")
        parts.append(b"%s %d\n" % (key.encode(), len(value)))
        parts.append(value)
    parts[0] = b"%d\n" % ((len(parts) - 1) // 2)
    return b"".join(parts)


def write_msg(stream, msg):
    stream.write(encode_msg(msg))
    stream.flush()
