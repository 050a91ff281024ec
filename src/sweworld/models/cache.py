"""A response cache in front of any `ChatModel`: same request, same reply, no second call.

Keyed by a SHA-256 of the request (model identity, messages, tools, sampling settings). One JSON file
per reply under ``$SWEWORLD_HOME/model-cache`` (or a directory you give), written atomically, so
parallel workers and separate runs share it safely. Meant for deterministic use (temperature 0, tests,
re-running a rollout); with sampling, pass a different ``salt`` per sample to keep samples apart.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from sweworld.core.protocols import Closeable
from sweworld.models.base import ChatModel, ModelReply


def request_key(identity: dict[str, Any], messages: list[dict], tools: list[dict] | None) -> str:
    """The cache key of one request (stable across runs and dict orderings)."""
    payload = json.dumps({"identity": identity, "messages": messages, "tools": tools or None},
                         sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


class CachedChatModel:
    """Wraps a `ChatModel`; replies are read from and written to a directory of JSON files."""

    def __init__(self, inner: ChatModel, cache_dir: str | Path | None = None, *, salt: str = ""):
        self.inner = inner
        if cache_dir is None:
            from sweworld.core.paths import subdir

            cache_dir = subdir("model-cache")
        self.cache_dir = Path(cache_dir)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.salt = salt
        self.hits = 0
        """Replies served from the cache."""
        self.misses = 0
        """Replies that needed a call to the inner model."""

    def _identity(self) -> dict[str, Any]:
        config = getattr(self.inner, "config", None)
        if config is not None and hasattr(config, "model_dump"):
            fields = config.model_dump(include={"url", "model", "temperature", "max_tokens",
                                                "native_tools", "extra_body"})
        else:
            fields = {"class": type(self.inner).__qualname__}
        return {**fields, "salt": self.salt}

    def path_for(self, messages: list[dict], tools: list[dict] | None = None) -> Path:
        key = request_key(self._identity(), messages, tools)
        return self.cache_dir / key[:2] / f"{key}.json"

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> ModelReply:
        path = self.path_for(messages, tools)
        if path.is_file():
            try:
                reply = ModelReply.model_validate_json(path.read_text())
            except ValueError:  # a corrupt entry is a miss, and gets rewritten
                pass
            else:
                self.hits += 1
                return reply
        reply = self.inner.complete(messages, tools)
        self.misses += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(reply.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return reply

    def close(self) -> None:
        if isinstance(self.inner, Closeable):
            self.inner.close()

    def __enter__(self) -> CachedChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
