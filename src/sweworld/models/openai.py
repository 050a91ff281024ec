"""An OpenAI-compatible chat-completions client (vLLM, SGLang, OpenAI, any proxy) over httpx.

Retries 429, 5xx, connection errors and unreadable bodies with capped exponential backoff (a
``Retry-After`` header wins when present); every other 4xx is a `ModelError` at once, with the status,
an excerpt of the body and what to check.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import httpx

from sweworld.core.errors import ModelError
from sweworld.models.base import ModelConfig, ModelReply, ToolCall, Usage

log = logging.getLogger(__name__)

_EXCERPT = 500
CONNECT_TIMEOUT = 30.0
"""Seconds to wait for a connection (an unreachable host must not hold a sample for ``timeout``)."""
_HINTS = {
    401: "check the API key: set the environment variable named by ModelConfig.api_key_env",
    403: "check the API key and that it may use this model",
    404: "check ModelConfig.url (it should end with /v1) and ModelConfig.model (the served model name)",
    413: "the request is too large: shorten the conversation or truncate observations",
}
_HINT_400 = ("check the request: prompt + max_tokens within the context length, the model name, and "
             "tool support (vLLM needs --enable-auto-tool-choice --tool-call-parser; or set "
             "native_tools=False to use text actions)")


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + f"... [{len(text) - _EXCERPT} more chars]"


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), None if absent or bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_tool_call(raw: dict[str, Any], index: int = 0) -> ToolCall:
    """One ``tool_calls`` entry -> `ToolCall`; bad arguments are flagged in ``parse_error``, never raised."""
    function = raw.get("function") or {}
    name = str(function.get("name") or "")
    call_id = str(raw.get("id") or f"call_{index}")
    args = function.get("arguments")
    if isinstance(args, dict):  # some servers send an object rather than a JSON string
        return ToolCall(id=call_id, name=name, arguments=args, raw_arguments=json.dumps(args))
    raw_arguments = "" if args is None else str(args)
    if not raw_arguments.strip():
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw_arguments)
    try:
        parsed = json.loads(raw_arguments)
    except json.JSONDecodeError as exc:
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw_arguments,
                        parse_error=f"arguments of {name!r} are not valid JSON: {exc}")
    if not isinstance(parsed, dict):
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw_arguments,
                        parse_error=f"arguments of {name!r} must be a JSON object, got "
                                    f"{type(parsed).__name__}")
    return ToolCall(id=call_id, name=name, arguments=parsed, raw_arguments=raw_arguments)


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def parse_reply(body: dict[str, Any], *, read_tools: bool = True) -> ModelReply:
    """A chat-completions response body -> `ModelReply` (`ModelError` when it has no choices)."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelError(f"the response has no choices: {_excerpt(json.dumps(body))}",
                         hint="check that the URL is an OpenAI-compatible chat-completions endpoint")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = (message.get("tool_calls") or []) if read_tools else []
    usage = body.get("usage") or {}
    return ModelReply(
        content=_content_text(message.get("content")),
        tool_calls=[parse_tool_call(call, i) for i, call in enumerate(calls) if isinstance(call, dict)],
        usage=Usage(**{k: int(usage.get(k) or 0) for k in Usage.model_fields}),
        finish_reason=choice.get("finish_reason"),
        raw=body,
    )


class OpenAIChatModel:
    """`ChatModel` over ``POST {url}/chat/completions``. Thread-safe; close it (or use ``with``)."""

    def __init__(self, config: ModelConfig, *, sleep: Callable[[float], None] = time.sleep,
                 transport: httpx.BaseTransport | None = None):
        self.config = config
        self._sleep = sleep
        self.endpoint = config.url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        timeout = httpx.Timeout(config.timeout, connect=min(config.timeout, CONNECT_TIMEOUT))
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)
        self.requests_sent = 0
        """HTTP attempts made, retries included."""
        self.retries = 0
        """Attempts that were retried (429, 5xx, connection errors, unreadable bodies)."""

    def request_body(self, messages: list[dict], tools: list[dict] | None = None) -> dict[str, Any]:
        """The JSON body ``complete`` sends."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": self.config.temperature}
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        if tools and self.config.native_tools:
            body["tools"] = tools
        body.update(self.config.extra_body)
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        cap = self.config.backoff_cap
        if retry_after is not None:
            return min(retry_after, cap)
        return min(self.config.backoff * (2 ** attempt), cap)

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> ModelReply:
        body = self.request_body(messages, tools)
        attempts = self.config.max_retries + 1
        last = ""
        for attempt in range(attempts):
            retry_after: float | None = None
            self.requests_sent += 1
            try:
                response = self._client.post(self.endpoint, json=body)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status == 429 or status >= 500:
                    last = f"HTTP {status}: {_excerpt(response.text)}"
                    retry_after = _retry_after(response.headers.get("Retry-After"))
                elif status >= 400:
                    raise ModelError(
                        f"HTTP {status} from {self.endpoint} (model {self.config.model!r}): "
                        f"{_excerpt(response.text)}",
                        hint=_HINTS.get(status, _HINT_400))
                elif status >= 300:
                    raise ModelError(f"HTTP {status} (redirect) from {self.endpoint}",
                                     hint="check ModelConfig.url: give the final base URL")
                else:
                    try:
                        payload = response.json()
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        last = f"unreadable JSON body: {_excerpt(response.text)}"
                    else:
                        if not isinstance(payload, dict):
                            raise ModelError(f"the response is not a JSON object: {_excerpt(response.text)}",
                                             hint="check that the URL is an OpenAI-compatible endpoint")
                        return parse_reply(payload, read_tools=self.config.native_tools)
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_after)
                self.retries += 1
                log.warning("model request failed (%s); retry %d/%d in %.2fs",
                            last, attempt + 1, self.config.max_retries, delay)
                self._sleep(delay)
        raise ModelError(
            f"{self.endpoint} failed after {attempts} attempt(s); last error: {last}",
            hint="check that the server is up and not overloaded; raise max_retries or backoff if it is busy")

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
