"""OpenAIChatModel against a real local HTTP server with scripted replies."""

from __future__ import annotations

import pytest

from chatserver import ChatServer, Raw, Reply, Status
from sweworld.core.errors import ModelError
from sweworld.models import ChatModel, ModelConfig, OpenAIChatModel

MESSAGES = [{"role": "system", "content": "you fix bugs"}, {"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {
    "name": "execute_bash", "description": "run a command",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                   "required": ["command"]}}}]


def make(server: ChatServer, sleeps: list[float] | None = None, **overrides) -> OpenAIChatModel:
    config = ModelConfig(url=server.url, model="test-model", api_key_env="SWEWORLD_TEST_NO_KEY",
                         backoff=0.01, **overrides)
    record = sleeps.append if sleeps is not None else (lambda _s: None)
    return OpenAIChatModel(config, sleep=record)


def header(server: ChatServer, index: int, name: str) -> str | None:
    return {k.lower(): v for k, v in server.headers[index].items()}.get(name.lower())


def test_text_reply():
    with ChatServer(["Hello there."]) as server, make(server) as model:
        assert isinstance(model, ChatModel)
        reply = model.complete(MESSAGES)
    assert reply.content == "Hello there."
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens > 0
    assert reply.raw["id"] == "chatcmpl-1"
    assert reply.to_message() == {"role": "assistant", "content": "Hello there."}


def test_tool_call_reply_parsed():
    calls = [("execute_bash", {"command": "ls -la\npwd"}), ("submit", {})]
    with ChatServer([calls]) as server, make(server) as model:
        reply = model.complete(MESSAGES, tools=TOOLS)
    assert [c.name for c in reply.tool_calls] == ["execute_bash", "submit"]
    first = reply.tool_calls[0]
    assert first.arguments == {"command": "ls -la\npwd"}
    assert first.id == "call_1_0"
    assert not first.malformed and reply.format_errors == 0
    assert reply.finish_reason == "tool_calls"
    message = reply.to_message()
    assert message["tool_calls"][0]["function"]["name"] == "execute_bash"
    assert message["tool_calls"][0]["function"]["arguments"] == first.raw_arguments


def test_429_retried_and_retry_after_honoured():
    sleeps: list[float] = []
    with ChatServer([Status(429, headers={"Retry-After": "3"}), "ok"]) as server, \
            make(server, sleeps) as model:
        reply = model.complete(MESSAGES)
    assert reply.content == "ok"
    assert len(server.requests) == 2
    assert sleeps == [3.0]  # the server's Retry-After, not the 0.01 s backoff
    assert model.retries == 1 and model.requests_sent == 2


def test_retry_after_capped():
    sleeps: list[float] = []
    with ChatServer([Status(429, headers={"Retry-After": "9999"}), "ok"]) as server, \
            make(server, sleeps, backoff_cap=5.0) as model:
        assert model.complete(MESSAGES).content == "ok"
    assert sleeps == [5.0]


def test_500_three_times_then_ok_with_exponential_backoff():
    sleeps: list[float] = []
    with ChatServer([500, 502, 503, "finally"]) as server, make(server, sleeps) as model:
        reply = model.complete(MESSAGES)
    assert reply.content == "finally"
    assert len(server.requests) == 4
    assert sleeps == pytest.approx([0.01, 0.02, 0.04])


def test_retries_exhausted_raises():
    with ChatServer([500, 500, 500]) as server, make(server, max_retries=2) as model, \
            pytest.raises(ModelError, match=r"after 3 attempt\(s\).*HTTP 500"):
        model.complete(MESSAGES)
    assert len(server.requests) == 3


def test_400_not_retried():
    body = '{"error": {"message": "maximum context length is 4096 tokens"}}'
    with ChatServer([Status(400, body=body), "never"]) as server, make(server) as model:
        with pytest.raises(ModelError) as info:
            model.complete(MESSAGES)
        assert len(server.requests) == 1
        assert server.remaining == 1
    text = str(info.value)
    assert "HTTP 400" in text and "maximum context length" in text
    assert "what to do" in text and "context length" in info.value.hint


def test_401_hint_names_the_env_var():
    with ChatServer([401]) as server, make(server) as model, \
            pytest.raises(ModelError, match="api_key_env"):
        model.complete(MESSAGES)


def test_malformed_tool_arguments_flagged_not_raised():
    script = [[("execute_bash", '{"command": "ls'), ("submit", "[1, 2]"), ("finish", "")]]
    with ChatServer(script) as server, make(server) as model:
        reply = model.complete(MESSAGES, tools=TOOLS)
    bad, not_object, empty = reply.tool_calls
    assert bad.arguments == {} and bad.raw_arguments == '{"command": "ls'
    assert bad.malformed and "not valid JSON" in bad.parse_error
    assert not_object.malformed and "JSON object" in not_object.parse_error
    assert not empty.malformed and empty.arguments == {}
    assert reply.format_errors == 2


def test_malformed_body_retried_then_ok():
    with ChatServer([Raw('{"choices": [ trunc'), "ok"]) as server, make(server) as model:
        assert model.complete(MESSAGES).content == "ok"
    assert len(server.requests) == 2


def test_body_without_choices_is_model_error():
    with ChatServer([Raw('{"object": "error"}')]) as server, make(server) as model, \
            pytest.raises(ModelError, match="no choices"):
        model.complete(MESSAGES)


def test_request_body_native_tools():
    with ChatServer(["a"]) as server, make(server, temperature=0.7, max_tokens=128) as model:
        model.complete(MESSAGES, tools=TOOLS)
    (body,) = server.requests
    assert body["model"] == "test-model"
    assert body["messages"] == MESSAGES
    assert body["temperature"] == 0.7
    assert body["max_tokens"] == 128
    assert body["tools"] == TOOLS
    assert server.paths == ["/v1/chat/completions"]


def test_request_body_text_actions_sends_no_tools_and_ignores_tool_calls():
    with ChatServer([Reply(content="thinking", tool_calls=[("execute_bash", {"command": "ls"})])]) \
            as server, make(server, native_tools=False) as model:
        reply = model.complete(MESSAGES, tools=TOOLS)
    body = server.requests[0]
    assert "tools" not in body and "max_tokens" not in body
    assert body["temperature"] == 0.0
    assert reply.tool_calls == [] and reply.content == "thinking"


def test_api_key_from_env(monkeypatch):
    monkeypatch.setenv("SWEWORLD_TEST_KEY", "sk-secret")
    with ChatServer(["a"]) as server:
        config = ModelConfig(url=server.url + "/", model="m", api_key_env="SWEWORLD_TEST_KEY")
        with OpenAIChatModel(config) as model:
            model.complete(MESSAGES)
    assert header(server, 0, "Authorization") == "Bearer sk-secret"


def test_no_auth_header_without_key(monkeypatch):
    monkeypatch.delenv("SWEWORLD_TEST_NO_KEY", raising=False)
    with ChatServer(["a"]) as server, make(server) as model:
        model.complete(MESSAGES)
    assert header(server, 0, "Authorization") is None


def test_connection_error_retried_then_raises():
    with ChatServer() as server:
        url = server.url
    sleeps: list[float] = []
    config = ModelConfig(url=url, model="m", api_key_env="X", backoff=0.01, max_retries=2)
    with OpenAIChatModel(config, sleep=sleeps.append) as model, \
            pytest.raises(ModelError, match="Connect"):
        model.complete(MESSAGES)
    assert len(sleeps) == 2


def test_extra_body_merged():
    with ChatServer(["a"]) as server, make(server, extra_body={"seed": 7, "top_p": 0.9}) as model:
        model.complete(MESSAGES)
    assert server.requests[0]["seed"] == 7 and server.requests[0]["top_p"] == 0.9
