"""LLM clients: the `ChatModel` protocol, an OpenAI-compatible HTTP implementation, a response cache."""

from sweworld.models.base import ChatModel, ModelConfig, ModelReply, ToolCall, Usage
from sweworld.models.cache import CachedChatModel
from sweworld.models.openai import OpenAIChatModel

__all__ = ["CachedChatModel", "ChatModel", "ModelConfig", "ModelReply", "OpenAIChatModel", "ToolCall",
           "Usage"]
