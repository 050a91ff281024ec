"""A key for a server whose clients cannot send one: the key is part of the URL's path.

OpenEnv's clients (``GenericEnvClient``, TRL's OpenEnv mode) send no header and no token: they take a
``base_url`` and add ``/ws``, ``/reset``, ``/step``. So ``sweworld openenv serve --api-key K`` serves
its app under ``/k/K/`` and nothing else: ``base_url="http://HOST:PORT/k/K"`` works with every such
client unchanged, and a request without the key is refused (HTTP 401, or a WebSocket closed with
1008 before it is accepted). The key is compared in constant time.

``loopback`` says whether a bind address is this machine's own: a server never listens beyond it
without a key.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
from typing import Any

PREFIX = "/k/"


def loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (``localhost``, 127.0.0.0/8, ::1)."""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


class KeyedPath:
    """ASGI app: requests under ``/k/<key>/`` reach ``app`` with that prefix moved to ``root_path``;
    every other request is refused. Lifespan events pass through."""

    def __init__(self, app: Any, key: str):
        if not key:
            raise ValueError("an empty key would let anyone in")
        self.app = app
        self.key = key

    def _inner(self, scope: dict) -> dict | None:
        path: str = scope.get("path", "")
        if not path.startswith(PREFIX):
            return None
        given, _, rest = path[len(PREFIX):].partition("/")
        if not secrets.compare_digest(given.encode(), self.key.encode()):
            return None
        return {**scope, "path": "/" + rest, "root_path": scope.get("root_path", "") + PREFIX + given}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        inner = self._inner(scope)
        if inner is not None:
            return await self.app(inner, receive, send)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "this server needs its key in the URL"})
            return None
        body = json.dumps({"detail": "this server needs its key in the URL path: base_url=http://HOST:PORT/k/<key>"})
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})
        return None
