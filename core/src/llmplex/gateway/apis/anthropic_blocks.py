"""The Messages API's content blocks, and the llmplex messages they become, nothing left out.

``cache_control`` marks become ``cache=True`` where llmplex can place the same
breakpoint: on a tool, a system block, an image or document part, a tool
result, or the message whose block carries it (a marked text block in the
middle of a user turn splits the turn there; the Anthropic plugin joins the
pieces back into one turn). Thinking blocks become opaque ``ReasoningPart``s
of format ``"anthropic"``, replayed unchanged; a thinking block the gateway
itself wrote for another provider's reasoning (``carried_reasoning``) becomes
that reasoning again. Images and documents in
tool results follow the results in a user message, as the tool loop sends
the parts a ``ToolResult`` returns.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.gateway.apis.carried_reasoning import is_carried, uncarry
from llmplex.gateway.calls import assistant_text, text_message
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.wire import media_from_data_url, part_from_base64, tool_result
from llmplex.types import Message, ReasoningPart, ToolCall

__all__ = [
    "Block",
    "CacheControl",
    "Image",
    "Text",
    "assistant_message",
    "user_messages",
]

_Open = ConfigDict(extra="allow", strict=True)


class CacheControl(BaseModel):
    """A prompt-cache breakpoint: llmplex places the API's default (5-minute) one."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["ephemeral"]
    ttl: Literal["5m"] | None = None


class _Marked(BaseModel):
    model_config = _Open
    cache_control: CacheControl | None = None

    @property
    def cached(self) -> bool:
        return self.cache_control is not None


class Text(_Marked):
    """A text block."""

    type: Literal["text"]
    text: str


class _Source(BaseModel):
    model_config = _Open
    type: Literal["base64", "url", "text"]
    media_type: str | None = None
    data: str | None = None
    url: str | None = None


class Image(_Marked):
    """An image block."""

    type: Literal["image"]
    source: _Source


class _Document(_Marked):
    type: Literal["document"]
    source: _Source
    title: str | None = None


class _ToolUse(_Marked):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class _ToolResult(_Marked):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[Annotated[Text | Image | _Document, Field(discriminator="type")]] | None = None
    is_error: bool | None = None


class _Thinking(BaseModel):
    model_config = _Open
    type: Literal["thinking"]
    thinking: str
    signature: str


class _Redacted(BaseModel):
    model_config = _Open
    type: Literal["redacted_thinking"]
    data: str


Block = Annotated[
    Text | Image | _Document | _ToolUse | _ToolResult | _Thinking | _Redacted, Field(discriminator="type")
]
"""Any block of a message's content."""


def _media(block: Image | _Document) -> Any:
    kind = "image" if isinstance(block, Image) else "document"
    source = block.source
    if source.type == "url":
        if not source.url:
            raise GatewayError(400, f"an {kind} source of type url needs url")
        part = media_from_data_url(source.url, kind)
    elif source.type == "text":
        return source.data or ""
    elif not source.data:
        raise GatewayError(400, f"an {kind} source of type base64 needs data")
    else:
        part = part_from_base64(kind, source.data, source.media_type)
    return part.cached() if block.cached else part


def _tool_result(block: _ToolResult) -> tuple[Message, list[Any]]:
    """The tool message for a result, and the parts (images, documents) that follow it in a user message."""
    texts: list[str] = []
    parts: list[Any] = []
    cache = block.cached
    if isinstance(block.content, str):
        texts.append(block.content)
    items = block.content if isinstance(block.content, list) else []
    for position, item in enumerate(items):
        piece = item.text if isinstance(item, Text) else _media(item)
        (texts if isinstance(piece, str) else parts).append(piece)
        if isinstance(piece, str) and item.cached:  # a marked image or document keeps its own mark
            if position != len(items) - 1:
                raise GatewayError(
                    400,
                    "cache_control on a text block inside a tool_result other than its last cannot be carried: "
                    "llmplex marks a whole tool result; move the mark to the tool_result block",
                    param="messages",
                )
            cache = True
    return tool_result(block.tool_use_id, texts, parts, is_error=bool(block.is_error), cache=cache)


def _user_turn(pieces: list[Any], cache: bool) -> Message:
    content = pieces[0] if len(pieces) == 1 and isinstance(pieces[0], str) else pieces
    return Message(role="user", content=content, cache=cache)


def user_messages(content: str | list[Any]) -> list[Message]:
    """A user turn: its tool results as tool messages, then its own pieces (split after each marked text)."""
    if isinstance(content, str):
        return [text_message("user", content, False)]
    results: list[Message] = []
    attachments: list[Any] = []
    turns: list[Message] = []
    pieces: list[Any] = []
    for block in content:
        if isinstance(block, _ToolResult):
            message, parts = _tool_result(block)
            results.append(message)
            attachments += parts
        elif isinstance(block, Text):
            pieces.append(block.text)
            if block.cached:
                turns.append(_user_turn(pieces, True))
                pieces = []
        elif isinstance(block, (Image, _Document)):
            pieces.append(_media(block))
        else:
            raise GatewayError(400, f"{block.type} blocks belong in assistant messages", param="messages")
    if pieces:
        turns.append(_user_turn(pieces, False))
    if attachments:
        turns.insert(0, _user_turn(attachments, False))
    return results + turns


def _reasoning(block: _Thinking | _Redacted) -> ReasoningPart:
    if isinstance(block, _Thinking) and is_carried(block.signature):
        return uncarry(block.signature)
    data = block.model_dump(exclude_unset=True)
    text = data.get("thinking")
    return ReasoningPart(format="anthropic", text=text if isinstance(text, str) else "", data=data)


def assistant_message(content: str | list[Any]) -> Message:
    """An assistant turn: text, tool calls, and its thinking blocks as reasoning parts."""
    if isinstance(content, str):
        return assistant_text(content)
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    for position, block in enumerate(content):
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, _ToolUse):
            calls.append(ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input)))
        elif isinstance(block, (_Thinking, _Redacted)):
            reasoning.append(_reasoning(block))
            continue
        else:
            raise GatewayError(400, f"an assistant message cannot carry {block.type} blocks", param="messages")
        if block.cached and position != len(content) - 1:
            raise GatewayError(
                400,
                "cache_control on an assistant block other than the message's last cannot be carried: llmplex "
                "marks a whole assistant message; move the mark to its last block",
                param="messages",
            )
    cache = any(isinstance(block, (Text, _ToolUse)) and block.cached for block in content)
    return Message(
        role="assistant",
        content="".join(texts) or None,
        tool_calls=tuple(calls),
        reasoning=tuple(reasoning),
        cache=cache,
    )
