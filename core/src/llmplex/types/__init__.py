"""Core value types shared by core and provider plugins."""

from llmplex.types.messages import Message, Role, ToolCall
from llmplex.types.request import LLMConfig, OutputSchema, Request, ToolChoice
from llmplex.types.response import FinishReason, Response
from llmplex.types.stream import StreamEvent, StreamState
from llmplex.types.tools import Tool
from llmplex.types.usage import Usage

__all__ = [
    "FinishReason",
    "LLMConfig",
    "Message",
    "OutputSchema",
    "Request",
    "Response",
    "Role",
    "StreamEvent",
    "StreamState",
    "Tool",
    "ToolCall",
    "ToolChoice",
    "Usage",
]
