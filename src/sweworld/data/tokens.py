"""Token counts of training rows: a real tokenizer (a local ``tokenizer.json``), or a stated estimate.

A row's count is the sum over its messages of the tokens of the role, the text and each tool call's
name and arguments, plus ``MESSAGE_OVERHEAD`` per message (the role markers a chat template adds),
plus the tokens of the tool schemas (JSON). Without a tokenizer every text counts ``ceil(chars / 4)``
(the agent loop's own estimate); the summary names which counter was used (``TokenCounter.name``).

``load_counter(spec)``: None -> the estimate; a ``tokenizer.json`` file, or a directory holding one
(a Hugging Face model directory) -> that tokenizer; any other name -> ``Tokenizer.from_pretrained``
(needs the hub). A path that does not exist, or a name the hub cannot serve, is a ``ConfigError``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sweworld.core.errors import ConfigError

MESSAGE_OVERHEAD = 4
"""Tokens added per message for the chat template's role markers (an approximation for every counter)."""
ESTIMATE = "estimate: characters / 4 (no tokenizer given)"


class TokenCounter:
    """Counts the tokens of texts and of chat rows (see the module docstring)."""

    def __init__(self, encode: Callable[[str], int] | None = None, name: str = ESTIMATE):
        self._encode = encode
        self.name = name

    @property
    def estimated(self) -> bool:
        return self._encode is None

    def text(self, text: str) -> int:
        if not text:
            return 0
        return self._encode(text) if self._encode else math.ceil(len(text) / 4)

    def messages(self, messages: Iterable[dict[str, Any]], tools: list[dict] | None = None) -> int:
        total = self.text(json.dumps(tools, ensure_ascii=False)) if tools else 0
        for message in messages:
            total += MESSAGE_OVERHEAD + sum(self.text(part) for part in message_texts(message))
        return total


def message_texts(message: dict[str, Any]) -> list[str]:
    """The texts of one OpenAI chat message: role, content, each tool call's name and arguments."""
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    texts = [str(message.get("role", "")), "" if content is None else str(content)]
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        texts += [str(function.get("name", "")),
                  arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)]
    return texts


def load_counter(spec: str | Path | None) -> TokenCounter:
    """The counter for ``--tokenizer`` (see the module docstring)."""
    if spec is None or str(spec) == "":
        return TokenCounter()
    from tokenizers import Tokenizer

    path = Path(spec)
    if path.is_dir():
        path = path / "tokenizer.json"
    looks_like_path = path.suffix == ".json" or "/" in str(spec) or path.exists()
    if looks_like_path:
        if not path.is_file():
            raise ConfigError(f"no tokenizer file at {path}", where="--tokenizer",
                              hint="give a tokenizer.json (or a model directory holding one), or leave "
                                   "--tokenizer out for the characters/4 estimate")
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises plain Exception on a bad file
            raise ConfigError(f"cannot read the tokenizer {path}: {exc}", where="--tokenizer",
                              hint="give a tokenizer.json written by the tokenizers library") from None
        name = f"tokenizer: {path}"
    else:
        try:
            tokenizer = Tokenizer.from_pretrained(str(spec))
        except Exception as exc:  # no hub access, unknown name
            raise ConfigError(f"cannot load the tokenizer {spec!r} from the hub: {exc}", where="--tokenizer",
                              hint="download its tokenizer.json and pass the file's path") from None
        name = f"tokenizer: {spec}"
    return TokenCounter(lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids), name)
