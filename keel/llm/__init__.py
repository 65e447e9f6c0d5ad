"""The model port: what the engine sends to a language model and what it gets back.

Messages use the OpenAI Chat Completions shapes (`keel.llm.port`); adapters for concrete
providers translate to and from them. `keel.testing.ScriptedModel` is the scripted double.
"""

from keel.llm.errors import ModelError
from keel.llm.port import (
    AssistantChatMessage,
    ChatFunction,
    ChatToolCall,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    PromptCache,
    SystemChatMessage,
    ToolCall,
    ToolChatMessage,
    ToolSchema,
    Usage,
    UserChatMessage,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)

__all__ = [
    "AssistantChatMessage",
    "ChatFunction",
    "ChatToolCall",
    "Message",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "PromptCache",
    "SystemChatMessage",
    "ToolCall",
    "ToolChatMessage",
    "ToolSchema",
    "Usage",
    "UserChatMessage",
    "assistant_message",
    "system_message",
    "tool_message",
    "user_message",
]
