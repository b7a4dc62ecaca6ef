"""``POST /v1/messages``: the Anthropic Messages wire format, whole and streamed, over any llmplex model.

What coding agents send is carried through: system prompts as text blocks,
tools and tool results (images in them included), images and PDF documents,
``cache_control`` marks (as ``cache=True`` on the message, part or tool that
carries them), ``thinking`` settings (as ``reasoning_effort``) and thinking
blocks of earlier turns (as opaque ``ReasoningPart``s, signatures unchanged).
A provider that cannot honour a mark or an option refuses it (a 400) unless it
drops unsupported things; core's rules in ``llmplex.engine.adapt`` decide.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.gateway.apis.anthropic_blocks import (
    Block,
    CacheControl,
    Text,
    assistant_message,
    user_messages,
)
from llmplex.gateway.apis.betas import unknown_betas
from llmplex.gateway.apis.carried_reasoning import carry
from llmplex.gateway.apis.fields import sort_fields
from llmplex.gateway.calls import CallSpec, sse, text_message
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.wire import MAX_TOKENS, dumps, new_id
from llmplex.types import Message, ReasoningPart, Response, StreamEvent, Usage
from llmplex.types.messages import decode_json

__all__ = ["MessagesRequest", "MessagesStreamEncoder", "messages_call", "messages_response", "thinking_block"]

_Open = ConfigDict(extra="allow", strict=True)


class _Message(BaseModel):
    model_config = _Open
    role: Literal["user", "assistant"]
    content: str | list[Block]


class _SystemBlock(BaseModel):
    model_config = _Open
    type: str
    text: str | None = None
    cache_control: CacheControl | None = None


class _SystemMessage(BaseModel):
    """A ``system`` turn inside ``messages`` (beta ``mid-conversation-system``): text blocks, and the beta's
    tool addition and removal blocks, which the gateway does not carry."""

    model_config = _Open
    role: Literal["system"]
    content: str | list[_SystemBlock] = ""


class _Tool(BaseModel):
    model_config = _Open
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    type: str | None = None
    cache_control: CacheControl | None = None


class _ThinkingConfig(BaseModel):
    model_config = _Open
    type: Literal["enabled", "adaptive", "disabled", "between_tools"]
    budget_tokens: int | None = Field(default=None, ge=1024, le=MAX_TOKENS)


class _OutputFormat(BaseModel):
    model_config = _Open
    type: Literal["json_schema"]
    schema_: dict[str, Any] = Field(alias="schema")


class _OutputConfig(BaseModel):
    model_config = _Open
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    format: _OutputFormat | None = None


class _ToolChoice(BaseModel):
    model_config = _Open
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None


class MessagesRequest(BaseModel):
    """A Messages API request; the fields it does not declare are sorted by ``apis.fields`` (hints dropped)."""

    model_config = _Open

    model: str = Field(min_length=1)
    max_tokens: int = Field(ge=1, le=MAX_TOKENS)
    messages: list[Annotated[_Message | _SystemMessage, Field(discriminator="role")]] = Field(min_length=1)
    system: str | list[Text] | None = None
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    tools: list[_Tool] | None = None
    tool_choice: _ToolChoice | None = None
    stream: bool | None = False
    thinking: _ThinkingConfig | None = None
    output_config: _OutputConfig | None = None
    cache_control: CacheControl | None = None


def _effort(request: MessagesRequest) -> str | None:
    """The ``reasoning_effort`` the thinking settings ask for: ``output_config.effort`` when given (every level
    the API has is one of llmplex's); else a budget's effort is the one whose budget in the Anthropic plugin
    (1,024 / 4,096 / 16,384) is the largest within it; adaptive thinking without an effort is ``high`` (the
    API's default). No thinking settings and no effort: none."""
    thinking = request.thinking
    given = request.output_config.effort if request.output_config else None
    if thinking is None or thinking.type == "disabled":
        return given
    if thinking.type in ("adaptive", "between_tools"):
        return given or "high"
    if thinking.budget_tokens is None:
        raise GatewayError(400, "thinking of type enabled needs budget_tokens", param="thinking.budget_tokens")
    if thinking.budget_tokens >= request.max_tokens:
        raise GatewayError(400, "thinking.budget_tokens must be below max_tokens", param="thinking.budget_tokens")
    if given is not None:
        return given
    return "low" if thinking.budget_tokens < 4096 else "medium" if thinking.budget_tokens < 16384 else "high"


def _system(system: str | list[Text] | None) -> list[Message]:
    if not system:
        return []
    if isinstance(system, str):
        return [text_message("system", system, False)]
    if not any(block.cached for block in system):
        return [text_message("system", "\n\n".join(block.text for block in system), False)]
    return [text_message("system", block.text, block.cached) for block in system]


def _system_turn(message: _SystemMessage, index: int, spec: CallSpec) -> list[Message]:
    """A system turn of ``messages``: its text as a system message where it stands; other blocks named."""
    if isinstance(message.content, str):
        return [text_message("system", message.content, False)] if message.content else []
    others = [block.type for block in message.content if block.type != "text"]
    if others:
        spec.unsupported.append(f"{', '.join(others)} blocks of messages.{index}")
    texts = [block for block in message.content if block.type == "text" and block.text]
    cached = any(block.cache_control for block in texts)
    joined = "\n\n".join(block.text or "" for block in texts)
    return [text_message("system", joined, cached)] if joined else []


def _tools(request: MessagesRequest, spec: CallSpec) -> list[dict[str, Any]]:
    """The client tools; a server tool (``web_search_20250305``...) is named unsupported: llmplex runs none."""
    tools: list[dict[str, Any]] = []
    for index, tool in enumerate(request.tools or ()):
        if tool.input_schema is None or tool.type not in (None, "custom"):
            spec.unsupported.append(f"tools.{index} ({tool.type or 'no input_schema'}: a server tool)")
            continue
        tools.append(
            {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": tool.input_schema,
                "cache": bool(tool.cache_control),
            }
        )
    return tools


def messages_call(request: MessagesRequest, betas: str = "") -> CallSpec:
    """The call a Messages request asks for; ``betas`` is the ``anthropic-beta`` header (comma separated)."""
    spec = CallSpec(request.model, _system(request.system), stream=bool(request.stream))
    for index, message in enumerate(request.messages):
        if isinstance(message, _SystemMessage):
            spec.messages += _system_turn(message, index, spec)
        elif message.role == "user":
            spec.messages += user_messages(message.content)
        else:
            spec.messages.append(assistant_message(message.content))
    if request.cache_control is not None and spec.messages:  # the API marks the last cacheable block
        spec.messages[-1] = spec.messages[-1].model_copy(update={"cache": True})
    kwargs: dict[str, Any] = {"max_tokens": request.max_tokens}
    effort = _effort(request)
    if effort is not None:
        kwargs["reasoning_effort"] = effort
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.top_p is not None:
        kwargs["top_p"] = request.top_p
    if request.stop_sequences:
        kwargs["stop"] = request.stop_sequences
    tools = _tools(request, spec)
    if tools:
        kwargs["tools"] = tools
    choice = request.tool_choice
    if choice is not None:
        if choice.type == "tool" and not choice.name:
            raise GatewayError(400, "tool_choice of type tool needs name", param="tool_choice.name")
        kwargs["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}.get(choice.type, choice.name)
    output = request.output_config.format if request.output_config else None
    if output is not None:
        if spec.stream:
            raise GatewayError(
                400, "output_config.format is served for whole answers only, not streams", param="stream"
            )
        kwargs["output"] = output.schema_
    spec.kwargs = kwargs
    given = [name for name in (*request.model_fields_set, *(request.model_extra or {})) if name != "cache_control"]
    hints, meanings = sort_fields("messages", dict.fromkeys(given))
    spec.dropped += hints + unknown_betas(betas)
    spec.unsupported += meanings
    return spec


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


def thinking_block(part: ReasoningPart) -> dict[str, Any]:
    """A reasoning part as a Messages API block: Anthropic's own unchanged, another provider's as a thinking
    block whose signature carries it (sent back through this gateway, it becomes that reasoning again)."""
    if part.format == "anthropic":
        return dict(part.data)
    return {"type": "thinking", "thinking": part.text, "signature": carry(part)}


def messages_response(response: Response, model: str) -> dict[str, Any]:
    """A whole answer as a Messages API ``message`` object."""
    content = [thinking_block(part) for part in response.reasoning]
    content += [{"type": "text", "text": response.text}] if response.text else []
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


_DELTA_HEAD = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
_TEXT_DELTA = b',"delta":{"type":"text_delta","text":'


class MessagesStreamEncoder:
    """A stream's events as the Messages API's named events: message_start ... message_stop."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._started = False
        self._index = -1
        self._block: tuple[str, int | None] | None = None  # ("text", None), ("thinking", None), ("tool", index)
        self._thought = ""  # the thinking text of the open thinking block so far

    def _event(self, name: str, body: dict[str, Any]) -> bytes:
        return sse(dumps({"type": name, **body}), name)

    def _text_delta(self, text: str) -> bytes:
        """``_event("content_block_delta", ...)`` of ``text`` in the open text block, with only the block's index
        and ``text`` encoded."""
        return b"".join((_DELTA_HEAD, b"%d" % self._index, _TEXT_DELTA, dumps(text), b"}}\n\n"))

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
            return out + self._text_delta(event.text)
        if event.type == "reasoning":
            return out + self._reasoning(event)
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

    def _reasoning(self, event: StreamEvent) -> bytes:
        """Thinking text as ``thinking_delta``s; the whole part then closes its block (signature included)."""
        out = b""
        part = event.reasoning
        block = part.data if part is not None and part.format == "anthropic" else None
        if block is not None and block.get("type") != "thinking":
            return self._open(("redacted", None), block) + self._close()  # redacted: one whole block
        if self._block != ("thinking", None):
            out += self._open(("thinking", None), {"type": "thinking", "thinking": "", "signature": ""})
            self._thought = ""
        text = event.text if part is None else part.text.removeprefix(self._thought)
        if text:
            self._thought += text
            delta = {"type": "thinking_delta", "thinking": text}
            out += self._event("content_block_delta", {"index": self._index, "delta": delta})
        if part is None:
            return out
        signature = block.get("signature", "") if block is not None else carry(part)
        delta = {"type": "signature_delta", "signature": signature}
        return out + self._event("content_block_delta", {"index": self._index, "delta": delta}) + self._close()

    def fail(self, error: GatewayError) -> bytes:
        """An ``error`` event (the anthropic SDK raises on it)."""
        return sse(dumps(error.body("anthropic")), "error")
