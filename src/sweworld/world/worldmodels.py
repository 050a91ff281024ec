"""World models: what turns SWT/SWR messages into reply texts, and the registry of them.

``WorldModel.complete(messages, n=1, *, attempt=0) -> list[str]``: ``n`` samples of the reply to
``messages``. ``attempt`` counts retries after an invalid reply (0 the first time); a model that
caches must serve a retry a fresh reply, not the invalid one again.

Registry (``MODELS``, a ``sweworld.core.registry.Registry``; entry points ``sweworld.world_models``):
``create_model(name, config)`` builds a model from a name and a config mapping; callers never name
a class. ``register_model(name, factory)`` adds one (``factory(config: dict) -> WorldModel``, or
``"package.module:function"`` imported on first use), so the embedded surrogates register
``embedded`` without touching callers. A config key the model does not take is a ``ConfigError``
(the configs forbid extra fields). Registered here:

- ``openai``: any OpenAI-compatible endpoint (vLLM, SGLang, a proxy); ``OpenAIWorldConfig``.
  Several URLs are used round-robin, one request per sample; each request retries 429, 5xx and
  connection errors (``sweworld.models.openai``); replies are cached by the rendered prompt
  (``sweworld.models.cache``), keyed by model name, sampling settings, sample index and attempt,
  not by the URL that served them.
- ``embedded``: the CPU-only embedded SWT fitted on traces (``sweworld.surrogates.swt.adapter``).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sweworld.core.protocols import WorldModel
from sweworld.core.registry import Registry, refuse_unknown
from sweworld.models.base import ModelConfig, ModelReply
from sweworld.models.cache import CachedChatModel
from sweworld.models.openai import OpenAIChatModel


class OpenAIWorldConfig(BaseModel):
    """An OpenAI-compatible world model (SWT or SWR) served at one or more URLs."""

    model_config = ConfigDict(extra="forbid")
    urls: list[str] = Field(min_length=1, description="Base URLs up to /v1, used round-robin, e.g. http://h:8000/v1.")
    model: str = Field(description="Served model name (vLLM --served-model-name).")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Environment variable holding the API key.")
    temperature: float = Field(default=0.0, description="Sampling temperature (SWE-World: 0 for SWT, 0.7 for SWR).")
    retry_temperature: float | None = Field(
        default=0.7, description="Temperature of retries after an invalid reply (None: keep `temperature`).")
    max_tokens: int | None = Field(default=None, description="Cap on generated tokens per reply.")
    timeout: float = Field(default=600, description="Seconds to wait for one HTTP response.")
    max_retries: int = Field(default=5, ge=0, description="HTTP retries per request after 429, 5xx, connection errors.")
    backoff: float = Field(default=1.0, ge=0, description="Base delay of the HTTP retries, doubled each time.")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="More request fields (top_p, seed, ...).")
    cache: bool = Field(default=True, description="Cache replies by rendered prompt.")
    cache_dir: str | None = Field(default=None, description="Cache directory (default $SWEWORLD_HOME/model-cache).")


class _RoundRobin:
    """A ``ChatModel`` sending each request to the next client in turn (thread-safe)."""

    def __init__(self, clients: list[OpenAIChatModel]):
        self.clients = clients
        self._cycle = itertools.cycle(clients)
        self._lock = threading.Lock()

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> ModelReply:
        with self._lock:
            client = next(self._cycle)
        return client.complete(messages, tools)


class OpenAIWorldModel:
    """``WorldModel`` over OpenAI-compatible endpoints (see the module docstring)."""

    def __init__(self, config: OpenAIWorldConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self._sleep = sleep
        self._pools: dict[float, _RoundRobin] = {}
        self._cached: dict[tuple[int, int], CachedChatModel] = {}
        self._lock = threading.Lock()
        self.calls = 0
        """Replies that needed a request (cache misses)."""

    def _pool(self, temperature: float) -> _RoundRobin:
        with self._lock:
            if temperature not in self._pools:
                c = self.config
                self._pools[temperature] = _RoundRobin([OpenAIChatModel(ModelConfig(
                    url=url, model=c.model, api_key_env=c.api_key_env, temperature=temperature,
                    max_tokens=c.max_tokens, timeout=c.timeout, max_retries=c.max_retries, backoff=c.backoff,
                    native_tools=False, extra_body=c.extra_body), sleep=self._sleep) for url in c.urls])
            return self._pools[temperature]

    def _temperature(self, attempt: int) -> float:
        retry = self.config.retry_temperature
        return self.config.temperature if attempt == 0 or retry is None else retry

    def _source(self, sample: int, attempt: int) -> _RoundRobin | CachedChatModel:
        pool = self._pool(self._temperature(attempt))
        if not self.config.cache:
            return pool
        with self._lock:
            key = (sample, attempt)
            if key not in self._cached:
                c = self.config
                salt = json.dumps({"model": c.model, "temperature": self._temperature(attempt), "max_tokens": c.max_tokens,
                                   "extra_body": c.extra_body, "sample": sample, "attempt": attempt}, sort_keys=True)
                self._cached[key] = CachedChatModel(pool, Path(c.cache_dir) if c.cache_dir else None, salt=salt)
            return self._cached[key]

    def complete(self, messages: list[dict], n: int = 1, *, attempt: int = 0) -> list[str]:
        replies = []
        for sample in range(n):
            source = self._source(sample, attempt)
            before = source.misses if isinstance(source, CachedChatModel) else None
            replies.append(source.complete(messages).content or "")
            if before is None or source.misses > before:
                self.calls += 1
        return replies

    @property
    def cache_hits(self) -> int:
        """Replies served from the cache."""
        return sum(c.hits for c in self._cached.values())

    def close(self) -> None:
        for pool in self._pools.values():
            for client in pool.clients:
                client.close()


def _openai(config: Mapping[str, Any]) -> WorldModel:
    refuse_unknown("the openai world model", config, OpenAIWorldConfig.model_fields)
    return OpenAIWorldModel(OpenAIWorldConfig.model_validate(dict(config)))


Factory = Callable[[Mapping[str, Any]], WorldModel]
MODELS: Registry[Factory] = Registry("world model", {"openai": _openai,
                                                    "embedded": "sweworld.surrogates.swt.adapter:create"},
                                  group="sweworld.world_models")


def register_model(name: str, factory: Factory | str, *, replace: bool = False) -> None:
    """Make ``create_model(name, ...)`` use ``factory`` (a callable, or ``"module:function"``)."""
    MODELS.register(name, factory, replace=replace)


def model_names() -> list[str]:
    """The registered world-model names."""
    return MODELS.names()


def create_model(name: str, config: Mapping[str, Any] | BaseModel | None = None) -> WorldModel:
    """The world model ``name`` built from ``config`` (a mapping or a pydantic config)."""
    factory = MODELS.get(name)
    values = config.model_dump() if isinstance(config, BaseModel) else dict(config or {})
    return factory(values)


__all__ = ["MODELS", "OpenAIWorldConfig", "OpenAIWorldModel", "WorldModel", "create_model", "model_names",
           "register_model"]
