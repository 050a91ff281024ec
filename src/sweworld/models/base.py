"""What every chat model speaks: messages in, a `ModelReply` out.

Messages are OpenAI chat-completions dicts (``{"role": ..., "content": ...}``, assistant messages may
carry ``tool_calls``, tool results have ``role="tool"`` and ``tool_call_id``). Tools are OpenAI
function schemas (``{"type": "function", "function": {"name", "description", "parameters"}}``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class ToolCall(BaseModel):
    """One function call the model asked for."""

    id: str
    """The call id the tool result must quote back (``tool_call_id``)."""
    name: str
    """The function name."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Parsed arguments; ``{}`` when ``raw_arguments`` was not a JSON object (see ``parse_error``)."""
    raw_arguments: str = ""
    """The arguments string exactly as the model wrote it."""
    parse_error: str | None = None
    """Why ``raw_arguments`` could not be parsed, or None when it was fine: a format error to count."""

    @property
    def malformed(self) -> bool:
        """True when the arguments could not be parsed into a JSON object."""
        return self.parse_error is not None

    def to_message(self) -> dict[str, Any]:
        """This call in the OpenAI ``tool_calls`` shape, for the assistant message of a history."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.raw_arguments}}


class Usage(BaseModel):
    """Token counts the endpoint reported (0 when it reported none)."""

    prompt_tokens: int = 0
    """Tokens in the request."""
    completion_tokens: int = 0
    """Tokens in the reply."""
    total_tokens: int = 0
    """Sum of both."""


class ModelReply(BaseModel):
    """One assistant turn."""

    content: str | None = None
    """The text of the reply (None when the model only called tools)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Function calls, in order; empty with text-only actions."""
    usage: Usage = Field(default_factory=Usage)
    """Token counts."""
    finish_reason: str | None = None
    """``stop``, ``tool_calls``, ``length``..., as the endpoint said."""
    raw: dict[str, Any] = Field(default_factory=dict)
    """The whole response body, for logs and debugging."""

    @property
    def format_errors(self) -> int:
        """How many tool calls carried unparseable arguments."""
        return sum(1 for call in self.tool_calls if call.malformed)

    def to_message(self) -> dict[str, Any]:
        """The reply as an assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a conversation (and optional tool schemas) into one assistant turn."""

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> ModelReply: ...


class ModelConfig(BaseModel):
    """How to reach an OpenAI-compatible chat-completions endpoint."""

    url: str
    """Base URL of the API, up to and including the version, e.g. ``http://host:8000/v1``."""
    model: str
    """Model name sent in every request (as served, e.g. by vLLM ``--served-model-name``)."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key; when it is unset no auth header is sent."""
    temperature: float = 0.0
    """Sampling temperature."""
    max_tokens: int | None = None
    """Cap on generated tokens per reply; None leaves it to the server."""
    timeout: float = 600
    """Seconds to wait for one HTTP response."""
    max_retries: int = 5
    """Retries after 429, 5xx and connection errors (attempts = 1 + max_retries)."""
    backoff: float = 1.0
    """Base delay in seconds; doubles with each retry, capped at ``backoff_cap``."""
    backoff_cap: float = 60.0
    """Longest delay between two attempts, in seconds (also caps a server's Retry-After)."""
    native_tools: bool = True
    """Send ``tools`` and read ``tool_calls``; False = text (XML) actions only, no ``tools`` sent."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """More fields merged into every request body (e.g. ``top_p``, ``stop``, ``seed``)."""
