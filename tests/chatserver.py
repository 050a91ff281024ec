"""A real local HTTP server that speaks OpenAI chat completions with scripted replies.

    with ChatServer(["hello", [("execute_bash", {"command": "ls"})], 429, Status(500)]) as server:
        model = OpenAIChatModel(ModelConfig(url=server.url, model="m"))
        ...
        assert len(server.requests) == ...

Reply specs, one consumed per POST to ``/v1/chat/completions``, in order:

- ``str``: an assistant text reply;
- ``list`` of ``(name, arguments)`` tuples: tool calls (``arguments`` a dict, or a str sent verbatim,
  which lets a test send malformed JSON);
- ``int``: an HTTP status returned once (with an OpenAI-style error body), e.g. 429 or 500;
- `Status`: a status with headers (``Retry-After``) and an optional body;
- `Raw`: a raw body (malformed JSON, truncated bytes...) with a status (default 200);
- `Reply`: full control (content and tool calls together, finish_reason, usage);
- a callable ``(request_body: dict) -> spec``: computed from the request.

When the script is used up, ``default`` is served (if given), else HTTP 410 with an error body that
says the script ran out. ``server.requests`` holds every request body (parsed JSON, or the raw text
when it was not JSON), ``server.headers`` the request headers, both in arrival order.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatServer", "Raw", "Reply", "Status"]


@dataclass
class Reply:
    """An assistant message: text and/or tool calls."""

    content: str | None = None
    tool_calls: list[tuple[str, dict | str]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None


@dataclass
class Status:
    """An HTTP error status returned once."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None


@dataclass
class Raw:
    """A raw response body, sent as is."""

    body: str | bytes
    status: int = 200
    content_type: str = "application/json"


Spec = Any  # str | list[tuple] | int | Status | Raw | Reply | Callable[[dict], Spec]


class ChatServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (random port) in a background thread."""

    def __init__(self, script: Iterable[Spec] = (), *, default: Spec | None = None,
                 model: str = "scripted-model"):
        self._script: deque[Spec] = deque(script)
        self.default = default
        self.model = model
        self.requests: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._calls = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script -------------------------------------------------------------------------------
    def add(self, *specs: Spec) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(specs)

    @property
    def remaining(self) -> int:
        """Replies not served yet."""
        return len(self._script)

    def _next(self, body: Any, headers: dict[str, str], path: str) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            self._calls += 1
            number = self._calls
            spec = self._script.popleft() if self._script else self.default
        if spec is None:
            return _error(410, "ChatServer: the script of replies is used up "
                               f"(request {number}); add replies or a default")
        while callable(spec):
            spec = spec(body)
        return self._render(spec, number, body)

    def _render(self, spec: Spec, number: int, body: Any) -> tuple[int, dict[str, str], bytes]:
        if isinstance(spec, bool):
            raise TypeError("ChatServer: a bool is not a reply spec")
        if isinstance(spec, int):
            spec = Status(spec)
        if isinstance(spec, Status):
            status, headers, payload = _error(spec.code, spec.body or f"scripted HTTP {spec.code}")
            if spec.body is not None:
                payload = spec.body.encode()
            return status, {**headers, **spec.headers}, payload
        if isinstance(spec, Raw):
            data = spec.body.encode() if isinstance(spec.body, str) else spec.body
            return spec.status, {"Content-Type": spec.content_type}, data
        if isinstance(spec, str):
            spec = Reply(content=spec)
        elif isinstance(spec, list):
            spec = Reply(tool_calls=spec)
        if not isinstance(spec, Reply):
            raise TypeError(f"ChatServer: unknown reply spec {spec!r}")
        return 200, {"Content-Type": "application/json"}, json.dumps(
            self._completion(spec, number, body)).encode()

    def _completion(self, reply: Reply, number: int, body: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{number}_{i}", "type": "function",
                 "function": {"name": name,
                              "arguments": args if isinstance(args, str) else json.dumps(args)}}
                for i, (name, args) in enumerate(reply.tool_calls)]
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        prompt = len(json.dumps(body.get("messages", []))) // 4 if isinstance(body, dict) else 0
        completion = len(json.dumps(message)) // 4
        usage = reply.usage or {"prompt_tokens": prompt, "completion_tokens": completion,
                                "total_tokens": prompt + completion}
        model = body.get("model", self.model) if isinstance(body, dict) else self.model
        return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage}

    # -- server -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL, ``http://127.0.0.1:PORT/v1``."""
        if self._httpd is None:
            raise RuntimeError("ChatServer is not started; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ChatServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), name="ChatServer",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _error(code: int, message: str) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"message": message, "type": "scripted_error", "code": code}}
    return code, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"Content-Type": "application/json"}, json.dumps(
                    {"object": "list", "data": [{"id": server.model, "object": "model"}]}).encode())
            else:
                self._send(*_error(404, f"no route GET {self.path}"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            text = self.rfile.read(length).decode("utf-8", "replace")
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(*_error(404, f"no route POST {self.path}"))
                return
            try:
                body: Any = json.loads(text)
            except json.JSONDecodeError:
                body = text
            self._send(*server._next(body, dict(self.headers.items()), self.path))

    return Handler

