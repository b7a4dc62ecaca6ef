"""``POST /v1/messages``: the Anthropic Messages wire format, whole and streamed, over any llmplex model.

What coding agents send is accepted: system prompts as text blocks,
``cache_control`` marks, tools and tool results, images and PDF documents,
``thinking`` settings and thinking blocks of earlier turns. Marks and thinking
blocks that the chosen provider cannot take through llmplex's types are
accepted and left out of the call.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.gateway.calls import CallSpec, sse
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.wire import MAX_TOKENS, dumps, media_from_data_url, new_id, part_from_base64
from llmplex.types import Message, Response, StreamEvent, ToolCall, Usage
from llmplex.types.messages import decode_json

__all__ = ["MessagesRequest", "MessagesStreamEncoder", "messages_call", "messages_response"]

_Open = ConfigDict(extra="allow", strict=True)


class _Text(BaseModel):
    model_config = _Open
    type: Literal["text"]
    text: str


class _Source(BaseModel):
    model_config = _Open
    type: Literal["base64", "url", "text"]
    media_type: str | None = None
    data: str | None = None
    url: str | None = None


class _Image(BaseModel):
    model_config = _Open
    type: Literal["image"]
    source: _Source


class _Document(BaseModel):
    model_config = _Open
    type: Literal["document"]
    source: _Source
    title: str | None = None


class _ToolUse(BaseModel):
    model_config = _Open
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class _ToolResult(BaseModel):
    model_config = _Open
    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[Annotated[_Text | _Image, Field(discriminator="type")]] | None = None
    is_error: bool | None = None


class _Thinking(BaseModel):
    model_config = _Open
    type: Literal["thinking", "redacted_thinking"]


_Block = Annotated[_Text | _Image | _Document | _ToolUse | _ToolResult | _Thinking, Field(discriminator="type")]


class _Message(BaseModel):
    model_config = _Open
    role: Literal["user", "assistant"]
    content: str | list[_Block]


class _Tool(BaseModel):
    model_config = _Open
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    input_schema: dict[str, Any]


class _ToolChoice(BaseModel):
    model_config = _Open
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None


class MessagesRequest(BaseModel):
    """A Messages API request; fields the gateway does not read (``metadata``, ``thinking``...) are accepted."""

    model_config = _Open

    model: str = Field(min_length=1)
    max_tokens: int = Field(ge=1, le=MAX_TOKENS)
    messages: list[_Message] = Field(min_length=1)
    system: str | list[_Text] | None = None
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    tools: list[_Tool] | None = None
    tool_choice: _ToolChoice | None = None
    stream: bool | None = False


def _media(block: _Image | _Document) -> Any:
    kind = "image" if isinstance(block, _Image) else "document"
    source = block.source
    if source.type == "url":
        if not source.url:
            raise GatewayError(400, f"an {kind} source of type url needs url")
        return media_from_data_url(source.url, kind)
    if source.type == "text":
        return source.data or ""
    if not source.data:
        raise GatewayError(400, f"an {kind} source of type base64 needs data")
    return part_from_base64(kind, source.data, source.media_type)


def _result_text(block: _ToolResult) -> str:
    if block.content is None or isinstance(block.content, str):
        text = block.content or ""
    else:
        text = "\n\n".join(part.text if isinstance(part, _Text) else "[image]" for part in block.content)
    return f"error: {text}" if block.is_error else text


def _user(message: _Message) -> list[Message]:
    if isinstance(message.content, str):
        return [Message.user(message.content)]
    out: list[Message] = []
    pieces: list[Any] = []
    for block in message.content:
        if isinstance(block, _ToolResult):
            out.append(Message.tool(block.tool_use_id, _result_text(block)))
        elif isinstance(block, _Text):
            pieces.append(block.text)
        elif isinstance(block, (_Image, _Document)):
            pieces.append(_media(block))
        elif isinstance(block, _ToolUse):
            raise GatewayError(400, "tool_use blocks belong in assistant messages", param="messages")
    if pieces:
        out.append(
            Message(role="user", content=pieces[0] if len(pieces) == 1 and isinstance(pieces[0], str) else pieces)
        )
    return out


def _assistant(message: _Message) -> Message:
    if isinstance(message.content, str):
        return Message.assistant(message.content)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if isinstance(block, _Text):
            texts.append(block.text)
        elif isinstance(block, _ToolUse):
            calls.append(ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input)))
        elif isinstance(block, (_Image, _Document, _ToolResult)):
            raise GatewayError(400, f"an assistant message cannot carry {block.type} blocks", param="messages")
    return Message.assistant("".join(texts) or None, tuple(calls))


def messages_call(request: MessagesRequest) -> CallSpec:
    """The call a Messages request asks for."""
    messages: list[Message] = []
    system = request.system
    if system:
        text = system if isinstance(system, str) else "\n\n".join(block.text for block in system)
        messages.append(Message.system(text))
    for message in request.messages:
        messages += _user(message) if message.role == "user" else [_assistant(message)]
    kwargs: dict[str, Any] = {"max_tokens": request.max_tokens}
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.top_p is not None:
        kwargs["top_p"] = request.top_p
    if request.stop_sequences:
        kwargs["stop"] = request.stop_sequences
    if request.tools:
        kwargs["tools"] = [
            {"name": t.name, "description": t.description or "", "parameters": t.input_schema} for t in request.tools
        ]
    choice = request.tool_choice
    if choice is not None:
        if choice.type == "tool" and not choice.name:
            raise GatewayError(400, "tool_choice of type tool needs name", param="tool_choice.name")
        kwargs["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}.get(choice.type, choice.name)
    return CallSpec(request.model, messages, kwargs, stream=bool(request.stream))


def _stop_reason(response: Response) -> str:
    if response.tool_calls or response.finish_reason == "tool_calls":
        return "tool_use"
    if response.finish_reason == "length":
        return "max_tokens"
    if response.finish_reason in ("refusal", "content_filter"):
        return "refusal"
    return "end_turn"


def messages_usage(usage: Usage) -> dict[str, int]:
    """A Usage in the Messages shape: ``input_tokens`` counts neither cache reads nor cache writes."""
    fresh = max(0, usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens)
    return {
        "input_tokens": fresh,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
    }


def _input(arguments: str) -> dict[str, Any]:
    try:
        value = decode_json(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def messages_response(response: Response, model: str) -> dict[str, Any]:
    """A whole answer as a Messages API ``message`` object."""
    content: list[dict[str, Any]] = [{"type": "text", "text": response.text}] if response.text else []
    content += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call.arguments)}
        for call in response.tool_calls
    ]
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(response),
        "stop_sequence": None,
        "usage": messages_usage(response.usage),
    }


class MessagesStreamEncoder:
    """A stream's events as the Messages API's named events: message_start ... message_stop."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._started = False
        self._index = -1
        self._block: tuple[str, int | None] | None = None  # ("text", None) or ("tool", tool index)

    def _event(self, name: str, body: dict[str, Any]) -> bytes:
        return sse(dumps({"type": name, **body}), name)

    def _start(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        message: dict[str, Any] = {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return self._event("message_start", {"message": message})

    def _close(self) -> bytes:
        if self._block is None:
            return b""
        self._block = None
        return self._event("content_block_stop", {"index": self._index})

    def _open(self, block: tuple[str, int | None], content: dict[str, Any]) -> bytes:
        out = self._close()
        self._index += 1
        self._block = block
        return out + self._event("content_block_start", {"index": self._index, "content_block": content})

    def encode(self, event: StreamEvent) -> bytes:
        """The events for one stream event."""
        out = self._start()
        if event.type == "text" and event.text:
            if self._block != ("text", None):
                out += self._open(("text", None), {"type": "text", "text": ""})
            delta = {"type": "text_delta", "text": event.text}
            return out + self._event("content_block_delta", {"index": self._index, "delta": delta})
        if event.type == "tool_call":
            block = ("tool", event.tool_call_index or 0)
            if self._block != block:
                content = {"type": "tool_use", "id": event.tool_call_id or new_id("toolu_"), "name": event.tool_name}
                out += self._open(block, {**content, "input": {}})
            if event.arguments_delta:
                delta = {"type": "input_json_delta", "partial_json": event.arguments_delta}
                out += self._event("content_block_delta", {"index": self._index, "delta": delta})
            return out
        if event.type == "response" and event.response is not None:
            response = event.response
            out += self._close()
            stop: dict[str, Any] = {"stop_reason": _stop_reason(response), "stop_sequence": None}
            out += self._event("message_delta", {"delta": stop, "usage": messages_usage(response.usage)})
            return out + self._event("message_stop", {})
        return out

    def fail(self, error: GatewayError) -> bytes:
        """An ``error`` event (the anthropic SDK raises on it)."""
        return sse(dumps(error.body("anthropic")), "error")
