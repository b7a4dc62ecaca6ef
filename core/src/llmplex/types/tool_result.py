"""What a tool handler may return besides plain data: text, content parts, structured output and an error flag."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from llmplex.types.parts import Audio, Document, Image

__all__ = ["ToolResult"]


class ToolResult(BaseModel):
    """A tool's result with more than one kind of content (what an MCP tool returns).

    ``text`` is what the tool message carries back to the model; ``parts``
    (images, documents, audio) follow in a user message of the next turn, since
    most providers take media only from users; ``structured`` is the tool's
    structured output, kept for your code (``ToolInvoked`` events carry it).
    ``is_error`` sends ``text`` back as a tool error the model may correct.
    """

    model_config = ConfigDict(frozen=True)

    text: str = ""
    parts: tuple[Annotated[Image | Document | Audio, Field(discriminator="type")], ...] = ()
    structured: Any = None
    is_error: bool = False
