"""Core value types shared by core and provider plugins."""

from llmplex.types.batch import BatchLimits, BatchOutcome, BatchRequest, BatchStatus
from llmplex.types.embeddings import Embeddings
from llmplex.types.messages import Message, Role, ToolCall
from llmplex.types.models import ModelInfo
from llmplex.types.parts import MAX_PART_BYTES, Audio, ContentPart, Document, Image, MediaPart
from llmplex.types.reasoning import ReasoningPart
from llmplex.types.request import LLMConfig, OutputSchema, ReasoningEffort, Request, ToolChoice
from llmplex.types.response import FinishReason, Response
from llmplex.types.stream import StreamEvent, StreamState
from llmplex.types.tools import Tool
from llmplex.types.usage import Usage

__all__ = [
    "MAX_PART_BYTES",
    "Audio",
    "BatchLimits",
    "BatchOutcome",
    "BatchRequest",
    "BatchStatus",
    "ContentPart",
    "Document",
    "Embeddings",
    "FinishReason",
    "Image",
    "LLMConfig",
    "MediaPart",
    "Message",
    "ModelInfo",
    "OutputSchema",
    "ReasoningEffort",
    "ReasoningPart",
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
