"""The HTTP side of sweworld's OpenEnv server (``openenv``): two ASGI middlewares around OpenEnv's app.

- ``StatelessBound``: OpenEnv's stateless ``POST /reset`` and ``POST /step`` build an environment per
  request (an episode opened and closed at once) on OpenEnv's own thread pool, whose queue has no
  bound, and count against no session limit (``--workers`` bounds WebSocket sessions only). Here at
  most ``bound`` of them run at once; one more is refused at once with 503, ``Retry-After`` and the
  JSON body of ``admission.Refused``, so that a flood of them cannot open episodes without limit.
  ``/health`` and the WebSocket sessions never wait behind them (OpenEnv runs those elsewhere).
- ``QuietClose``: OpenEnv 0.3.0's ``/ws`` closes the socket after closing the session, when the client
  that asked for the close has usually gone already; the ``WebSocketDisconnect`` that raises is no
  error (the session is closed), so it is not logged as one.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

from sweworld.integrations.admission import SATURATED, Refused

STATELESS = ("/reset", "/step")


class StatelessBound:
    """At most ``bound`` stateless ``POST /reset`` or ``/step`` at once (see the module docstring)."""

    def __init__(self, app: Any, bound: int):
        self.app, self.bound = app, bound
        self.running = 0
        self.took = 1.0
        """Seconds one took, a moving average: what ``Retry-After`` is made of."""

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") not in STATELESS:
            return await self.app(scope, receive, send)
        route = scope["path"].lstrip("/")
        if self.running >= self.bound:
            retry = max(1, math.ceil(self.took * self.running / self.bound))
            refused = Refused(503, SATURATED, f"{self.running} stateless /reset or /step request(s) are running, the "
                              f"most this server runs at once (--workers {self.bound}); a WebSocket session "
                              "(OpenEnv's clients) is the way to act in an episode", retry,
                              running=self.running, bound=self.bound)
            return await refused.response(route)(scope, receive, send)
        self.running += 1
        started = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            self.running -= 1
            self.took = 0.8 * self.took + 0.2 * (time.monotonic() - started)
        return None


class QuietClose:
    """Swallows the ``WebSocketDisconnect`` of a socket its client closed first (see the module docstring)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)
        from starlette.websockets import WebSocketDisconnect
        with contextlib.suppress(WebSocketDisconnect):
            await self.app(scope, receive, send)
        return None


__all__ = ["STATELESS", "QuietClose", "StatelessBound"]
