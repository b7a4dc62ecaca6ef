"""``POST /v1/chat/completions``: the OpenAI Chat Completions wire format, whole and streamed."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.gateway.apis.fields import sort_fields
from llmplex.gateway.calls import CallSpec, assistant_text, sse, text_message
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.wire import MAX_TOKENS, dumps, media_from_data_url, new_id, now, part_from_base64
from llmplex.types import Message, Response, StreamEvent, ToolCall, Usage

__all__ = ["ChatRequest", "ChatStreamEncoder", "chat_call", "chat_response", "chat_usage"]

_Open = ConfigDict(extra="allow", strict=True)


class _TextPart(BaseModel):
    model_config = _Open
    type: Literal["text"]
    text: str


class _ImageURL(BaseModel):
    model_config = _Open
    url: str


class _ImagePart(BaseModel):
    model_config = _Open
    type: Literal["image_url"]
    image_url: _ImageURL


class _AudioData(BaseModel):
    model_config = _Open
    data: str
    format: Literal["wav", "mp3"]


class _AudioPart(BaseModel):
    model_config = _Open
    type: Literal["input_audio"]
    input_audio: _AudioData


class _FileData(BaseModel):
    model_config = _Open
    file_data: str | None = None
    filename: str | None = None
    file_id: str | None = None


class _FilePart(BaseModel):
    model_config = _Open
    type: Literal["file"]
    file: _FileData


class _RefusalPart(BaseModel):
    model_config = _Open
    type: Literal["refusal"]
    refusal: str


_Part = Annotated[_TextPart | _ImagePart | _AudioPart | _FilePart | _RefusalPart, Field(discriminator="type")]


class _Function(BaseModel):
    model_config = _Open
    name: str = Field(min_length=1)
    arguments: str = "{}"


class _ToolCall(BaseModel):
    model_config = _Open
    id: str
    type: Literal["function"] = "function"
    function: _Function


class _Message(BaseModel):
    model_config = _Open
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[_Part] | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class _FunctionDef(BaseModel):
    model_config = _Open
    name: str = Field(min_length=1, max_length=64)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class _Tool(BaseModel):
    model_config = _Open
    type: Literal["function"]
    function: _FunctionDef


class _NamedFunction(BaseModel):
    model_config = _Open
    name: str


class _NamedToolChoice(BaseModel):
    model_config = _Open
    type: Literal["function"]
    function: _NamedFunction


class _StreamOptions(BaseModel):
    model_config = _Open
    include_usage: bool | None = None


class _JSONSchema(BaseModel):
    model_config = _Open
    name: str = Field(default="output", pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool | None = None


class _ResponseFormat(BaseModel):
    model_config = _Open
    type: Literal["text", "json_object", "json_schema"]
    json_schema: _JSONSchema | None = None


class ChatRequest(BaseModel):
    """A Chat Completions request: the fields the gateway reads are checked, others are accepted and ignored."""

    model_config = _Open

    model: str = Field(min_length=1)
    messages: list[_Message] = Field(min_length=1)
    stream: bool | None = False
    stream_options: _StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    seed: int | None = None
    stop: str | list[str] | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    n: int | None = Field(default=None, ge=1, le=1)
    tools: list[_Tool] | None = None
    tool_choice: Literal["auto", "none", "required"] | _NamedToolChoice | None = None
    response_format: _ResponseFormat | None = None
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None


def _text_of(content: str | list[_Part] | None, role: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content:
        if isinstance(part, _TextPart):
            pieces.append(part.text)
        elif isinstance(part, _RefusalPart):
            pieces.append(part.refusal)
        else:
            raise GatewayError(400, f"a {role} message takes only text parts, got a {part.type!r} part")
    return "\n\n".join(pieces)


def _user_content(content: str | list[_Part] | None) -> Any:
    if content is None or isinstance(content, str):
        return content or ""
    pieces: list[Any] = []
    for part in content:
        if isinstance(part, _TextPart):
            pieces.append(part.text)
        elif isinstance(part, _ImagePart):
            pieces.append(media_from_data_url(part.image_url.url, "image"))
        elif isinstance(part, _AudioPart):
            kind = "audio/wav" if part.input_audio.format == "wav" else "audio/mpeg"
            pieces.append(part_from_base64("audio", part.input_audio.data, kind))
        elif isinstance(part, _FilePart):
            if not part.file.file_data:
                raise GatewayError(400, "file parts must carry file_data (uploaded file ids are not served)")
            document = media_from_data_url(part.file.file_data, "document")
            pieces.append(document.model_copy(update={"name": part.file.filename}) if part.file.filename else document)
        else:
            pieces.append(part.refusal)
    return pieces


def _message(message: _Message) -> Message:
    if message.role in ("system", "developer"):
        return text_message("system", _text_of(message.content, message.role) or "")
    if message.role == "user":
        content = _user_content(message.content)
        return text_message("user", content) if isinstance(content, str) else Message(role="user", content=content)
    if message.role == "tool":
        if not message.tool_call_id:
            raise GatewayError(400, "a tool message needs tool_call_id", param="messages.tool_call_id")
        return Message.tool(message.tool_call_id, _text_of(message.content, "tool") or "", message.name)
    if not message.tool_calls:
        return assistant_text(_text_of(message.content, "assistant"))
    calls = tuple(
        ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments) for call in message.tool_calls
    )
    return Message.assistant(_text_of(message.content, "assistant"), calls)


def chat_call(request: ChatRequest) -> CallSpec:
    """The call a Chat Completions request asks for."""
    kwargs: dict[str, Any] = {}
    for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty", "seed", "reasoning_effort"):
        value = getattr(request, name)
        if value is not None and value != "none":  # effort "none": no reasoning, as when it is left out
            kwargs[name] = value
    max_tokens = request.max_completion_tokens or request.max_tokens
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if request.stop is not None:
        kwargs["stop"] = [request.stop] if isinstance(request.stop, str) else request.stop
    if request.tools:
        kwargs["tools"] = [
            {
                "name": tool.function.name,
                "description": tool.function.description or "",
                "parameters": tool.function.parameters or {"type": "object", "properties": {}},
            }
            for tool in request.tools
        ]
    if request.tool_choice is not None:
        choice = request.tool_choice
        kwargs["tool_choice"] = choice if isinstance(choice, str) else choice.function.name
    response_format = request.response_format
    if response_format is not None and response_format.type == "json_schema":
        if response_format.json_schema is None:
            raise GatewayError(400, "response_format of type json_schema needs json_schema", param="response_format")
        if request.stream:
            raise GatewayError(
                400, "response_format json_schema is served for whole answers only, not streams", param="stream"
            )
        kwargs["output"] = response_format.json_schema.schema_  # core's structured output: native where it can
    options = request.stream_options
    spec = CallSpec(
        model=request.model,
        messages=[_message(m) for m in request.messages],
        kwargs=kwargs,
        stream=bool(request.stream),
        include_usage=bool(options and options.include_usage),
    )
    extra = request.model_extra or {}
    if "store" in extra:
        spec.privacy["store"] = extra["store"]
    for name in ("prompt_cache_key", "parallel_tool_calls", "service_tier"):
        if name in extra:
            spec.openai_options[name] = extra[name]
    hints, meanings = sort_fields("chat.completions", dict.fromkeys([*request.model_fields_set, *extra]))
    spec.dropped += [name for name in hints if name not in spec.openai_options]
    spec.unsupported += meanings
    return spec


def chat_usage(usage: Usage) -> dict[str, Any]:
    """A Usage in the Chat Completions shape."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def _finish(reason: str | None, has_calls: bool) -> str:
    if reason in ("length", "content_filter"):
        return reason
    return "tool_calls" if has_calls or reason == "tool_calls" else "stop"


def _tool_calls(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    return [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        for call in calls
    ]


def chat_response(response: Response, model: str) -> dict[str, Any]:
    """A whole answer as a ``chat.completion`` object (``model`` as the client asked for it)."""
    message: dict[str, Any] = {"role": "assistant", "content": response.text or None, "refusal": response.refusal}
    if response.tool_calls:
        message["tool_calls"] = _tool_calls(response.tool_calls)
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": now(),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish(response.finish_reason, bool(response.tool_calls)),
                "logprobs": None,
            }
        ],
        "usage": chat_usage(response.usage),
    }


class ChatStreamEncoder:
    """A stream's events as ``chat.completion.chunk`` events, ``[DONE]`` last; usage last when asked for."""

    def __init__(self, model: str, include_usage: bool) -> None:
        self._id = new_id("chatcmpl-")
        self._created = now()
        self._model = model
        self._include_usage = include_usage
        self._started = False
        self._has_calls = False
        # a chunk's event but its delta and finish reason, encoded once a stream: each chunk puts those between
        self._head = b"".join(
            (
                b'data: {"id":',
                dumps(self._id),
                b',"object":"chat.completion.chunk","created":',
                dumps(self._created),
                b',"model":',
                dumps(model),
                b',"choices":[{"index":0,"delta":',
            )
        )
        self._tail = b',"logprobs":null}]' + (b',"usage":null}\n\n' if include_usage else b"}\n\n")

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        """``sse(dumps(chunk))`` of the ``chat.completion.chunk`` carrying ``delta``, with only ``delta`` (and
        ``finish``) encoded."""
        reason = b',"finish_reason":null' if finish is None else b',"finish_reason":' + dumps(finish)
        return b"".join((self._head, dumps(delta), reason, self._tail))

    def _start(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return self._chunk({"role": "assistant", "content": ""})

    def encode(self, event: StreamEvent) -> bytes:
        """The chunk(s) for one event."""
        if event.type == "text":
            return self._start() + self._chunk({"content": event.text}) if event.text else self._start()
        if event.type == "tool_call":
            self._has_calls = True
            call: dict[str, Any] = {"index": event.tool_call_index or 0}
            if event.tool_call_id:
                call["id"] = event.tool_call_id
                call["type"] = "function"
            function: dict[str, str] = {}
            if event.tool_name:
                function["name"] = event.tool_name
            function["arguments"] = event.arguments_delta
            call["function"] = function
            return self._start() + self._chunk({"tool_calls": [call]})
        if event.type != "response" or event.response is None:
            return b""
        response = event.response
        out = self._start() + self._chunk({}, _finish(response.finish_reason, self._has_calls))
        if self._include_usage:
            last = {
                "id": self._id,
                "object": "chat.completion.chunk",
                "created": self._created,
                "model": self._model,
                "choices": [],
                "usage": chat_usage(response.usage),
            }
            out += sse(dumps(last))
        return out + b"data: [DONE]\n\n"

    def fail(self, error: GatewayError) -> bytes:
        """An ``error`` event (the openai SDK raises ``APIError`` on it)."""
        return sse(dumps(error.body("openai")))
