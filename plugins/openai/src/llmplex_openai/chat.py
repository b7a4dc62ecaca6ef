"""Chat Completions (``POST /chat/completions``): format a request, parse an answer or a stream chunk.

Plain functions, reusable by any plugin that talks to an OpenAI-compatible server:
``format_chat_request``, ``parse_chat_response``, ``parse_chat_event``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmplex.errors import LLMConfigurationError, LLMServerError
from llmplex.types import FinishReason, Message, Request, Response, StreamEvent, StreamState, Tool, ToolCall
from llmplex_openai.outcomes import raise_for_outcome
from llmplex_openai.parts import chat_content
from llmplex_openai.schema import strict_json_schema
from llmplex_openai.usage import core_usage
from llmplex_openai.wire_json import as_json

__all__ = ["format_chat_request", "parse_chat_event", "parse_chat_response", "tool_declaration"]

_FINISH: dict[str | None, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


# --- request ---------------------------------------------------------------------------


def format_chat_request(request: Request, *, max_tokens_key: str = "max_completion_tokens") -> dict[str, Any]:
    """The JSON body of a Chat Completions request; only options that were set are included.

    ``max_tokens_key`` names the field ``max_tokens`` goes to: ``max_completion_tokens``
    for OpenAI, ``max_tokens`` for servers that only know the older name.
    """
    payload: dict[str, Any] = {
        "model": request.model,
        "messages": [_message(m, i) for i, m in enumerate(request.messages)],
    }
    if request.tools:
        payload["tools"] = [tool_declaration(t) for t in request.tools]
    if request.tool_choice is not None:
        payload["tool_choice"] = _tool_choice(request.tool_choice)
    if request.output is not None:
        schema = request.output.json_schema
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.output.name,
                "schema": strict_json_schema(schema) if request.output.strict else schema,
                "strict": request.output.strict,
            },
        }
    for name, value in request.config.set_options().items():
        if name == "max_tokens":
            payload[max_tokens_key] = value
        elif name == "stop":
            payload["stop"] = list(value)
        else:
            payload[name] = value
    if request.stream:
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    payload.update(request.provider_options)
    return payload


def _message(message: Message, index: int) -> dict[str, Any]:
    if message.role == "tool":
        if not message.tool_call_id:
            raise LLMConfigurationError(
                f"messages[{index}] is a tool result without tool_call_id; set it to the id of the call it answers"
            )
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content or ""}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ],
        }
    return {"role": message.role, "content": chat_content(message, index)}


def tool_declaration(tool: Tool) -> dict[str, Any]:
    """One tool as this API's request declares it."""
    function: dict[str, Any] = {"name": tool.name, "parameters": tool.parameters}
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


# --- response --------------------------------------------------------------------------


def parse_chat_response(raw: Any, request: Request) -> Response:
    """Core response from a chat completion (the first choice): its decoded JSON, or the SDK's ``ChatCompletion``.

    ``Response.raw`` is ``raw`` as given. Raises ``LLMRefusalError`` when the model refused and
    ``LLMIncompleteError`` when structured output was cut short.
    """
    data = as_json(raw)
    choices = data.get("choices") if type(data) is dict or isinstance(data, Mapping) else None
    if not choices or not (type(choices[0]) is dict or isinstance(choices[0], Mapping)):  # decoded JSON: no ABC check
        raise LLMServerError(f"the API answered with something that is not a chat completion: {data!r:.300}")
    choice = choices[0]
    message = choice.get("message") or {}
    text = message.get("content") or ""
    finish = _FINISH.get(choice.get("finish_reason"), "other")
    raise_for_outcome(request, finish, text, message.get("refusal"))
    return Response.of(  # unvalidated when every value has its field's type (validated otherwise)
        text=text,
        tool_calls=_tool_calls(message),
        finish_reason=finish,
        usage=core_usage(data.get("usage")),
        model=data.get("model") or "",
        response_id=data.get("id"),
        raw=raw,
    )


def _tool_calls(message: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for call in message.get("tool_calls") or ():
        if call.get("type", "function") == "function":
            function = call.get("function") or {}
            calls.append(
                ToolCall(id=call.get("id"), name=function.get("name"), arguments=function.get("arguments") or "{}")
            )
    return tuple(calls)


# --- stream ----------------------------------------------------------------------------


def parse_chat_event(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """Core stream events from one chat completion chunk: its decoded JSON, or the SDK's ``ChatCompletionChunk``.

    Text deltas, tool-call pieces (index, id, name, arguments delta), the finish
    reason and, on the last chunk, usage. Refusal deltas are collected and raised
    as ``LLMRefusalError`` when the choice finishes.
    """
    data = as_json(chunk)
    events: list[StreamEvent] = []
    rid, model = data.get("id"), data.get("model")
    choices = data.get("choices")
    if choices:
        choice = choices[0]
        delta = choice.get("delta") or _EMPTY
        content = delta.get("content")
        if content:
            events.append(StreamEvent.text_delta(content, rid, model))
            if state.request.output is not None:
                state.data.setdefault("text", []).append(content)
        refusal = delta.get("refusal")
        if refusal:
            state.data.setdefault("refusal", []).append(refusal)
        for call in delta.get("tool_calls") or ():
            function = call.get("function") or _EMPTY
            events.append(
                StreamEvent(
                    type="tool_call",
                    tool_call_index=call.get("index"),
                    tool_call_id=call.get("id"),
                    tool_name=function.get("name"),
                    arguments_delta=function.get("arguments") or "",
                    response_id=rid,
                )
            )
        reason = choice.get("finish_reason")
        if reason is not None:
            finish = _FINISH.get(reason, "other")
            refused = "".join(state.data.get("refusal", ())) or None
            raise_for_outcome(state.request, finish, "".join(state.data.get("text", ())), refused)
            events.append(StreamEvent.finish_event(finish, rid))
    usage = data.get("usage")
    if usage is not None:
        events.append(StreamEvent.usage_event(core_usage(usage), rid, model))
    return events


_EMPTY: Mapping[str, Any] = {}
