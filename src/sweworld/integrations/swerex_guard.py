"""The door of a sweworld SWE-ReX runtime (``swerex``): an ASGI middleware in front of every route.

- a request without the API key (``X-API-Key``) gets 401 and nothing runs;
- a request whose ``X-Request-ID`` was answered already gets that answer again (swerex's idempotency),
  unless it was refused (429, 503: nothing ran, so a retry with the same id is admitted afresh);
- a request of a route whose work is admitted by the server's ``admission.Gate`` (every route but
  ``/is_alive``, answered at once, and ``/close``, which waits for no episode's queue) is refused here
  when its episode's queue or the server's is full, before its body is read: under a flood a refusal
  costs next to nothing, and the event loop stays free for ``/is_alive`` and the other episodes.
"""

from __future__ import annotations

import hmac
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse, Response

from sweworld.integrations import swerex_branch
from sweworld.integrations.admission import Refused

if TYPE_CHECKING:
    from sweworld.integrations.swerex import RexServer

#: swerex's routes and sweworld's branching routes that run an episode's work.
GATED = frozenset(("create_session", "run_in_session", "close_session", "execute", "read_file", "write_file",
                   "upload", *swerex_branch.ROUTES))


class Guard:
    """ASGI middleware: authentication, idempotency and early refusal (see the module docstring)."""

    def __init__(self, app: Any, api_key: str, server: RexServer, keep: int = 8):
        self.app, self.key, self.server, self.keep = app, api_key.encode(), server, keep
        self.answered: OrderedDict[bytes, list[dict]] = OrderedDict()

    def _refused(self, path: str) -> Response | None:
        parts = path.strip("/").split("/")
        if parts[-1] not in GATED or len(parts) > 2:
            return None
        try:
            self.server.gate.check((parts[0] if len(parts) == 2 else None) or self.server.default or "")
        except Refused as refused:
            return refused.response(parts[-1])
        return None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if not hmac.compare_digest(headers.get(b"x-api-key", b""), self.key):
            return await JSONResponse({"detail": "Invalid API Key"}, status_code=401)(scope, receive, send)
        request_id = headers.get(b"x-request-id")
        if request_id in self.answered:
            for message in self.answered[request_id]:
                await send(message)
            return None
        refused = self._refused(scope["path"])
        if refused is not None:
            return await refused(scope, receive, send)
        if request_id is None:
            return await self.app(scope, receive, send)
        sent: list[dict] = []

        async def keep(message: dict) -> None:
            sent.append(message)
            await send(message)
        await self.app(scope, receive, keep)
        if sent and sent[0].get("status") in (429, 503):
            return None
        self.answered[request_id] = sent
        while len(self.answered) > self.keep:
            self.answered.popitem(last=False)
        return None


__all__ = ["GATED", "Guard"]
