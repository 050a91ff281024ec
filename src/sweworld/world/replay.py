"""A replay server: an OpenAI-compatible endpoint whose SWT/SWR replies come from recorded traces.

The world's plumbing end to end without a served model: ``ReplayIndex`` renders every trace's
stored context in every prompt style and indexes the rendered messages (system + user) by hash.

- Exact hit (the request's messages are those of a recorded context): the recorded result, written
  in the model's output format. SWT: ``{"stdout": <recorded output>, "stderr": "", "exit_code": <recorded>}``
  (a real run's output is stdout and stderr interleaved; it is all given as stdout). SWR: a
  ``<think>`` line, then ``{"test_report": <the recorded test output between the harness's
  markers>, "reward": <the real verdict>, "exit_code": <the real test exit code, when known>}``.
- Miss, with an honest fallback. SWT: a recorded command of one simulated part whose context,
  asked about that part alone (as the sim executor asks: ``python t.py`` of ``python t.py | tail``),
  is the request's; else the most recent trace of the same command (read from the request's fenced
  ``bash`` block), or of a command whose one simulated part it is; else ``{"stdout": "", "stderr":
  "sweworld replay: no recorded output for this command", "exit_code": 1}``. The recorded output is
  that of the whole command (what its real filters left). SWR: the most recent evaluation of the same patch (the agent's patch
  block, found by its position in the style's template), else reward 0.

Counts of hits, fallbacks and misses per kind are served at ``/stats``. Later traces win over
earlier ones with the same key. ``ReplayServer`` runs it over HTTP (``/v1/chat/completions``,
``/v1/models``, ``/stats``), in a thread (``with ReplayServer(traces) as url: ...``) or in the
foreground (``serve_forever``, the ``sweworld world serve`` command).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sweworld.harness.grade import extract_test_run
from sweworld.world.context import SWRContext
from sweworld.world.router import route
from sweworld.world.templates import render, styles
from sweworld.world.traces import EvalTrace, StepTrace, load_traces

NONCE_MASK = "<nonce>"
"""What the harness writes in test_output.txt in place of the run's nonce (harness.evaluate)."""
NO_OUTPUT = "sweworld replay: no recorded output for this command"
FENCE = re.compile(r"^(`{3,})(\w*)\n(.*?)^\1$", re.MULTILINE | re.DOTALL)
_PROBE_PATCH, _PROBE_GOLD = "sweworld-probe-agent-patch", "sweworld-probe-gold-patch"
OUTCOMES = ("hit", "fallback", "miss")


def message_key(messages: Sequence[dict]) -> str:
    """Hash of the roles and texts of ``messages`` (system and user)."""
    pairs = [(m.get("role"), message_text(m.get("content"))) for m in messages if m.get("role") in ("system", "user")]
    return hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode("utf-8")).hexdigest()


def message_text(content: object) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def fences(text: str, lang: str) -> list[str]:
    """The bodies of the ``lang`` code fences of ``text`` (as ``templates.fence`` writes them)."""
    return [m.group(3) for m in FENCE.finditer(text) if m.group(2) == lang]


def recorded_test_report(trace: EvalTrace) -> str:
    """The test output a real grading read: between the harness's markers, else all of it."""
    run = extract_test_run(trace.test_output, NONCE_MASK)
    return run.test_output if run.markers_found else trace.test_output



def swt_reply(stdout: str, stderr: str, exit_code: int) -> str:
    return json.dumps({"stdout": stdout, "stderr": stderr, "exit_code": exit_code}, ensure_ascii=False)


def swr_reply(trace: EvalTrace | None, why: str) -> str:
    if trace is None:
        answer = {"test_report": "sweworld replay: no recorded evaluation of this patch", "reward": 0}
    else:
        answer = {"test_report": recorded_test_report(trace), "reward": int(trace.resolved)}
        if trace.report.get("test_exit_code") is not None:
            answer["exit_code"] = trace.report["test_exit_code"]
    return f"<think>{why}</think>\n" + json.dumps(answer, ensure_ascii=False)


class ReplayIndex:
    """Recorded traces indexed for replay (see the module docstring); thread-safe ``answer``."""

    def __init__(self, traces: Iterable[StepTrace | EvalTrace], prompt_styles: Sequence[str] | None = None):
        self.styles = list(prompt_styles or styles())
        self.exact: dict[str, StepTrace | EvalTrace] = {}
        self.part_exact: dict[str, StepTrace] = {}  # the context asked about a command's one simulated part
        self.commands: dict[str, StepTrace] = {}
        self.parts: dict[str, StepTrace] = {}
        self.patches: dict[str, EvalTrace] = {}
        self.kinds: dict[str, str] = {}  # system text -> "swt" | "swr"
        self.patch_slot: dict[str, int] = {}  # SWR system text -> index of the agent's patch among diff fences
        self.stats = {kind: dict.fromkeys(OUTCOMES, 0) for kind in ("swt", "swr")}
        self._lock = threading.Lock()
        self._probe()
        for trace in traces:
            self.add(trace)

    def _probe(self) -> None:
        probe = SWRContext(task={"instance_id": "-", "repo": "-", "base_commit": "-"}, test_command="true",
                           patch=_PROBE_PATCH, gold_patch=_PROBE_GOLD)
        for style in self.styles:
            system, user = (m["content"] for m in render(style, "swr", probe))
            bodies = [b.rstrip("\n") for b in fences(user, "diff")]
            self.kinds[system] = "swr"
            if _PROBE_PATCH in bodies:
                self.patch_slot[system] = bodies.index(_PROBE_PATCH)

    def add(self, trace: StepTrace | EvalTrace) -> None:
        kind = "swt" if isinstance(trace, StepTrace) else "swr"
        for style in self.styles:
            messages = render(style, kind, trace.context)
            self.exact[message_key(messages)] = trace
            self.kinds[messages[0]["content"]] = kind
        if isinstance(trace, EvalTrace):
            self.patches[trace.context.patch] = trace
            return
        self.commands[trace.context.command] = trace
        spans = route(trace.command).spans
        if len(spans) == 1 and spans[0].context != trace.context.command:
            self.parts[spans[0].context] = trace
            part = trace.context.model_copy(update={"command": spans[0].context})
            for style in self.styles:
                self.part_exact[message_key(render(style, "swt", part))] = trace

    def _step_by_command(self, user: str) -> StepTrace | None:
        for body in reversed(fences(user, "bash")):
            for command in (body, body[:-1] if body.endswith("\n") else body):
                found = self.commands.get(command) or self.parts.get(command)
                if found is not None:
                    return found
        return None

    def _eval_by_patch(self, system: str, user: str) -> EvalTrace | None:
        slot = self.patch_slot.get(system)
        bodies = fences(user, "diff")
        if slot is None or slot >= len(bodies):
            return None
        body = bodies[slot]
        return self.patches.get(body) or self.patches.get(body[:-1] if body.endswith("\n") else body)

    def answer(self, messages: Sequence[dict]) -> tuple[str, str, str]:
        """(reply text, kind "swt"|"swr", outcome "hit"|"fallback"|"miss") for ``messages``."""
        system = next((message_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
        user = next((message_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        kind = self.kinds.get(system) or ("swr" if "test_report" in system else "swt")
        trace = self.exact.get(message_key(messages))
        if kind == "swt":
            outcome = "hit" if isinstance(trace, StepTrace) else "fallback"
            if outcome == "fallback":
                trace = self.part_exact.get(message_key(messages)) or self._step_by_command(user)
            reply = swt_reply(trace.output, "", trace.exit_code) if trace else swt_reply("", NO_OUTPUT, 1)
        else:
            outcome = "hit" if isinstance(trace, EvalTrace) else "fallback"
            why = "Replayed: the recorded real evaluation of this context."
            if outcome == "fallback":
                trace = self._eval_by_patch(system, user)
                why = ("No recorded evaluation has this context; replaying the recorded evaluation of the same patch."
                       if trace else "No recorded evaluation of this patch: unresolved.")
            reply = swr_reply(trace, why)
        outcome = outcome if trace is not None else "miss"
        with self._lock:
            self.stats[kind][outcome] += 1
        return reply, kind, outcome

    def summary(self) -> dict:
        with self._lock:
            counts = {kind: dict(values) for kind, values in self.stats.items()}
        totals = {f"{o}s" if o != "miss" else "misses": sum(c[o] for c in counts.values()) for o in OUTCOMES}
        return {**totals, **counts, "contexts": len(self.exact), "styles": self.styles}


def load_index(paths: Sequence[str | Path], prompt_styles: Sequence[str] | None = None) -> ReplayIndex:
    return ReplayIndex(load_traces(*paths), prompt_styles)


class ReplayServer:
    """``ReplayIndex`` over HTTP on ``host:port`` (port 0: a free one); ``with ReplayServer(t) as url``."""

    def __init__(self, traces: ReplayIndex | Iterable[StepTrace | EvalTrace] | str | Path, *,
                 host: str = "127.0.0.1", port: int = 0, model: str = "replay"):
        if isinstance(traces, (str, Path)):
            traces = load_index([traces])
        self.index = traces if isinstance(traces, ReplayIndex) else ReplayIndex(traces)
        self.host, self.port, self.model = host, port, model
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def stats(self) -> dict:
        return self.index.summary()

    @property
    def url(self) -> str:
        """Base URL up to ``/v1``."""
        if self._httpd is None:
            raise RuntimeError("the replay server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def bind(self) -> ReplayServer:
        self._httpd = ThreadingHTTPServer((self.host, self.port), _handler(self))
        self._httpd.daemon_threads = True
        return self

    def serve_forever(self) -> None:
        (self._httpd or self.bind()._httpd).serve_forever(0.1)  # type: ignore[union-attr]

    def start(self) -> ReplayServer:
        self.bind()
        self._thread = threading.Thread(target=self.serve_forever, name="ReplayServer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        httpd, thread, self._httpd, self._thread = self._httpd, self._thread, None, None
        for step in (httpd and httpd.shutdown, httpd and httpd.server_close, thread and thread.join):
            if step:
                step()

    def __enter__(self) -> str:
        return self.start().url

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def completion(self, body: dict) -> dict:
        """The chat-completions response to ``body``."""
        reply, kind, outcome = self.index.answer(body.get("messages") or [])
        n = max(1, int(body.get("n") or 1))
        prompt = sum(len(message_text(m.get("content"))) for m in body.get("messages") or []) // 4
        return {"id": f"replay-{kind}-{outcome}", "object": "chat.completion", "created": 0,
                "model": body.get("model") or self.model, "system_fingerprint": f"sweworld-replay-{outcome}",
                "choices": [{"index": i, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
                            for i in range(n)],
                "usage": {"prompt_tokens": prompt, "completion_tokens": len(reply) // 4 * n,
                          "total_tokens": prompt + len(reply) // 4 * n}}


class JSONHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler answering JSON; headers and body leave at once (TCP_NODELAY: no
    40 ms delayed-ACK stall per request)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": status}})


def _handler(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            if path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model",
                                                              "owned_by": "sweworld-replay"}]})
            elif path in ("/stats", "/v1/stats"):
                self._send(200, server.stats)
            else:
                self._error(404, f"no route GET {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                self._error(404, f"no route POST {self.path}")
                return
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                self._error(400, "the body must be a JSON object with a list of messages")
                return
            self._send(200, server.completion(body))

    return Handler
