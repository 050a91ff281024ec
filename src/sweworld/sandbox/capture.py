"""The in-sandbox server's output capture: the head and the tail of a stream, the middle counted.

Standard library only and no package imports: ``server.py`` loads it beside itself inside the sandbox.
"""


class Capture:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream and counts the rest."""

    def __init__(self, cap):
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data):
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def render(self):
        if self.total <= self.head_cap + self.tail_cap:
            return bytes(self.head + self.tail), False
        tail = self.tail[-self.tail_cap:] if self.tail_cap else b""
        cut = self.total - len(self.head) - len(tail)
        marker = ("\n[... %d bytes of output cut: the first %d and the last %d bytes are kept ...]\n"
                  % (cut, len(self.head), len(tail))).encode()
        return bytes(self.head) + marker + bytes(tail), True
