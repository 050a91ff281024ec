"""CachedChatModel over a real scripted server: repeats are served from disk."""

from __future__ import annotations

from chatserver import ChatServer
from sweworld.models import ModelConfig, OpenAIChatModel
from sweworld.models.cache import CachedChatModel

MESSAGES = [{"role": "user", "content": "fix it"}]


def model(server: ChatServer, **overrides) -> OpenAIChatModel:
    return OpenAIChatModel(ModelConfig(url=server.url, model="m", api_key_env="X", **overrides))


def test_second_identical_request_is_a_hit(tmp_path):
    with ChatServer(["first", [("submit", {"answer": "42"})], "third"]) as server:
        with CachedChatModel(model(server), tmp_path) as cached:
            a = cached.complete(MESSAGES)
            b = cached.complete(MESSAGES)
            tools = [{"type": "function", "function": {"name": "submit", "parameters": {}}}]
            c = cached.complete(MESSAGES, tools)
            d = cached.complete(MESSAGES, tools)
        assert len(server.requests) == 2
    assert a == b and a.content == "first"
    assert c == d and c.tool_calls[0].arguments == {"answer": "42"}
    assert (cached.hits, cached.misses) == (2, 2)


def test_cache_survives_a_new_client_and_keys_on_settings(tmp_path):
    with ChatServer(["one", "two", "three"]) as server:
        with CachedChatModel(model(server), tmp_path) as first:
            first.complete(MESSAGES)
        with CachedChatModel(model(server), tmp_path) as again:
            assert again.complete(MESSAGES).content == "one"
        with CachedChatModel(model(server, temperature=0.7), tmp_path) as hot:
            assert hot.complete(MESSAGES).content == "two"
        with CachedChatModel(model(server), tmp_path, salt="sample-1") as salted:
            assert salted.complete(MESSAGES).content == "three"
        assert len(server.requests) == 3


def test_corrupt_entry_is_a_miss(tmp_path):
    with ChatServer(["one", "two"]) as server, CachedChatModel(model(server), tmp_path) as cached:
        cached.complete(MESSAGES)
        cached.path_for(MESSAGES).write_text("{not json")
        assert cached.complete(MESSAGES).content == "two"
        assert cached.complete(MESSAGES).content == "two"
        assert len(server.requests) == 2
