"""Builders of OpenAI response payloads shaped exactly like the documented wire format.

Every builder's output is validated against the vendored OpenAPI spec in
``test_openapi_helper.py``, so these fixtures cannot drift from the real API.
Chat Completions: ``chat_completion*``, ``chat_stream_*``. Responses API:
``response*``, ``responses_stream_*`` (failed, incomplete, refused and erroring
ones too). Errors: ``error_body`` and shortcuts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Json = dict[str, Any]

MODEL = "gpt-4o-mini-2024-07-18"
CREATED = 1_741_569_952
CHAT_ID = "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"
RESPONSE_ID = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
MESSAGE_ID = "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b"
FUNCTION_CALL_ID = "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0"
CALL_ID = "call_unLAR8MvFNptuiZK6K6HCy5k"
_TEXT_PART = {"item_id": MESSAGE_ID, "output_index": 0, "content_index": 0}


@dataclass(frozen=True)
class TokenUsage:
    """Provider-neutral token counts; builders map them to each API's field names."""

    input_tokens: int = 19
    output_tokens: int = 10
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class FunctionCall:
    """One tool call the model makes: function name and JSON-encoded arguments."""

    name: str = "get_weather"
    arguments: str = '{"location":"Paris, France"}'
    call_id: str = CALL_ID


# --- Chat Completions ------------------------------------------------------------------


def chat_usage(usage: TokenUsage = TokenUsage()) -> Json:
    """A ``CompletionUsage`` object with prompt/completion token details."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def chat_completion(
    text: str | None = "Hello! How can I assist you today?",
    *,
    finish_reason: Literal["stop", "length", "tool_calls", "content_filter"] = "stop",
    tool_calls: list[FunctionCall] | None = None,
    refusal: str | None = None,
    usage: TokenUsage | None = TokenUsage(),
    model: str = MODEL,
) -> Json:
    """A ``CreateChatCompletionResponse`` with one choice."""
    message: Json = {"role": "assistant", "content": text, "refusal": refusal, "annotations": []}
    if tool_calls:
        message["tool_calls"] = [
            {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in tool_calls
        ]
    body: Json = {
        "id": CHAT_ID,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "service_tier": "default",
        "system_fingerprint": "fp_06737a9306",
    }
    if usage is not None:
        body["usage"] = chat_usage(usage)
    return body


def chat_completion_tool_calls(*calls: FunctionCall, usage: TokenUsage = TokenUsage()) -> Json:
    """The model asks for tool calls (``content`` null, ``finish_reason`` tool_calls)."""
    return chat_completion(None, finish_reason="tool_calls", tool_calls=list(calls or [FunctionCall()]), usage=usage)


def chat_completion_truncated(text: str = "Once upon a time, in a", usage: TokenUsage = TokenUsage()) -> Json:
    """Output cut by ``max_completion_tokens`` (``finish_reason`` length)."""
    return chat_completion(text, finish_reason="length", usage=usage)


def chat_completion_refusal(refusal: str = "I'm sorry, I can't help with that.") -> Json:
    """The model refused (``content`` null, ``refusal`` set)."""
    return chat_completion(None, refusal=refusal)


def chat_chunk(
    delta: Json, *, finish_reason: str | None = None, usage: TokenUsage | None = None, model: str = MODEL
) -> Json:
    """One ``CreateChatCompletionStreamResponse`` chunk with a single choice."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    return _chunk([choice], None if usage is None else chat_usage(usage), model)


def chat_usage_chunk(usage: TokenUsage = TokenUsage(), model: str = MODEL) -> Json:
    """The final chunk sent with ``stream_options.include_usage``: no choices, only usage."""
    return _chunk([], chat_usage(usage), model)


def _chunk(choices: list[Json], usage: Json | None, model: str) -> Json:
    return {
        "id": CHAT_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_06737a9306",
        "choices": choices,
        "usage": usage,
    }


def chat_stream_text(
    parts: list[str] | None = None, *, usage: TokenUsage | None = TokenUsage(), finish_reason: str = "stop"
) -> list[Json]:
    """Chunks of a streamed text answer: role, content deltas, finish, then usage."""
    chunks = [chat_chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [chat_chunk({"content": part}) for part in (parts or ["Hello", "!", " How can I help?"])]
    chunks.append(chat_chunk({}, finish_reason=finish_reason))
    return chunks + ([chat_usage_chunk(usage)] if usage is not None else [])


def chat_stream_tool_call(
    call: FunctionCall = FunctionCall(), *, argument_parts: int = 3, usage: TokenUsage | None = TokenUsage()
) -> list[Json]:
    """Chunks of a streamed tool call: id and name first, then argument fragments."""
    head = {"index": 0, "id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": ""}}
    chunks = [chat_chunk({"role": "assistant", "content": None, "tool_calls": [head], "refusal": None})]
    chunks += [
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})
        for fragment in _split(call.arguments, argument_parts)
    ]
    chunks.append(chat_chunk({}, finish_reason="tool_calls"))
    return chunks + ([chat_usage_chunk(usage)] if usage is not None else [])


def chat_stream_refusal(parts: list[str] | None = None) -> list[Json]:
    """Chunks of a streamed refusal: ``delta.refusal`` fragments, finish, usage."""
    chunks = [chat_chunk({"role": "assistant", "content": None, "refusal": ""})]
    chunks += [chat_chunk({"refusal": part}) for part in (parts or ["I'm sorry, ", "I can't help with that."])]
    return [*chunks, chat_chunk({}, finish_reason="stop"), chat_usage_chunk()]


# --- Responses API ---------------------------------------------------------------------


def response_usage(usage: TokenUsage = TokenUsage()) -> Json:
    """A ``ResponseUsage`` object with input/output token details."""
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def output_text_part(text: str) -> Json:
    """An ``output_text`` content part."""
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def refusal_part(refusal: str = "I'm sorry, I can't help with that.") -> Json:
    """A ``refusal`` content part."""
    return {"type": "refusal", "refusal": refusal}


def message_item(*parts: Json, status: Literal["in_progress", "completed", "incomplete"] = "completed") -> Json:
    """An assistant ``message`` output item."""
    return {"id": MESSAGE_ID, "type": "message", "status": status, "role": "assistant", "content": list(parts)}


def function_call_item(call: FunctionCall = FunctionCall(), status: str = "completed") -> Json:
    """A ``function_call`` output item."""
    return {
        "id": FUNCTION_CALL_ID,
        "type": "function_call",
        "status": status,
        "call_id": call.call_id,
        "name": call.name,
        "arguments": call.arguments,
    }


def response(
    *output: Json,
    status: Literal["completed", "failed", "in_progress", "cancelled", "queued", "incomplete"] = "completed",
    incomplete_reason: Literal["max_output_tokens", "content_filter"] | None = None,
    usage: TokenUsage | None = TokenUsage(),
    model: str = MODEL,
    previous_response_id: str | None = None,
) -> Json:
    """A ``Response`` object; by default one completed text message.

    The live API also sends ``"user": null`` and, while in progress, ``"usage": null``;
    the spec types both as non-nullable, so these builders omit them instead.
    """
    body: Json = {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": False,
        "completed_at": CREATED + 1 if status == "completed" else None,
        "error": None,
        "incomplete_details": None if incomplete_reason is None else {"reason": incomplete_reason},
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": model,
        "output": list(output) if output else [message_item(output_text_part("Hello! How can I help?"))],
        "parallel_tool_calls": True,
        "previous_response_id": previous_response_id,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "metadata": {},
    }
    if usage is not None:
        body["usage"] = response_usage(usage)
    return body


def response_text(text: str = "Hello! How can I help?", usage: TokenUsage = TokenUsage()) -> Json:
    """A completed response holding one ``output_text`` message."""
    return response(message_item(output_text_part(text)), usage=usage)


def response_function_call(*calls: FunctionCall, usage: TokenUsage = TokenUsage()) -> Json:
    """A completed response whose output is ``function_call`` items."""
    return response(*(function_call_item(call) for call in calls or [FunctionCall()]), usage=usage)


def response_incomplete(text: str = "Once upon a time, in a", usage: TokenUsage = TokenUsage()) -> Json:
    """Output cut by ``max_output_tokens``: status incomplete, partial message."""
    return response(
        message_item(output_text_part(text), status="incomplete"),
        status="incomplete",
        incomplete_reason="max_output_tokens",
        usage=usage,
    )


def response_refusal(refusal: str = "I'm sorry, I can't help with that.") -> Json:
    """A completed response whose message holds a ``refusal`` content part."""
    return response(message_item(refusal_part(refusal)))


def response_failed(code: str = "server_error", message: str = "The model failed to generate a response.") -> Json:
    """A ``Response`` with status failed and its ``error``."""
    return {**response(status="failed", usage=None), "output": [], "error": {"code": code, "message": message}}


def responses_stream_text(parts: list[str] | None = None, *, usage: TokenUsage = TokenUsage()) -> list[Json]:
    """Events of a streamed text answer, from ``response.created`` to ``response.completed``."""
    parts = parts or ["Hello", "!", " How can I help?"]
    text = "".join(parts)
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "response.in_progress", "response": _in_progress()},
        *_text_deltas(parts),
        {"type": "response.output_text.done", **_TEXT_PART, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **_TEXT_PART, "part": output_text_part(text)},
        {"type": "response.output_item.done", "output_index": 0, "item": message_item(output_text_part(text))},
        {"type": "response.completed", "response": response_text(text, usage)},
    ]
    return _numbered(events)


def responses_stream_function_call(
    call: FunctionCall = FunctionCall(), *, argument_parts: int = 3, usage: TokenUsage = TokenUsage()
) -> list[Json]:
    """Events of a streamed function call with its arguments in fragments."""
    where = {"item_id": FUNCTION_CALL_ID, "output_index": 0}
    started = FunctionCall(call.name, "", call.call_id)
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "response.in_progress", "response": _in_progress()},
        {"type": "response.output_item.added", "output_index": 0, "item": function_call_item(started, "in_progress")},
        *(
            {"type": "response.function_call_arguments.delta", **where, "delta": fragment}
            for fragment in _split(call.arguments, argument_parts)
        ),
        {"type": "response.function_call_arguments.done", **where, "name": call.name, "arguments": call.arguments},
        {"type": "response.output_item.done", "output_index": 0, "item": function_call_item(call)},
        {"type": "response.completed", "response": response_function_call(call, usage=usage)},
    ]
    return _numbered(events)


def responses_stream_incomplete(parts: list[str] | None = None, *, usage: TokenUsage = TokenUsage()) -> list[Json]:
    """A streamed answer cut by ``max_output_tokens``: text deltas, then ``response.incomplete``."""
    parts = parts or ['{"name": "Par', 'is", "coun']
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        *_text_deltas(parts),
        {"type": "response.incomplete", "response": response_incomplete("".join(parts), usage)},
    ]
    return _numbered(events)


def responses_stream_refusal(refusal: str = "I'm sorry, I can't help with that.") -> list[Json]:
    """A streamed refusal: ``response.refusal.delta`` events, then ``response.completed``."""
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "response.output_item.added", "output_index": 0, "item": message_item(status="in_progress")},
        {"type": "response.refusal.delta", **_TEXT_PART, "delta": refusal},
        {"type": "response.refusal.done", **_TEXT_PART, "refusal": refusal},
        {"type": "response.completed", "response": response_refusal(refusal)},
    ]
    return _numbered(events)


def responses_stream_error(code: str = "server_error", message: str = "The server had an error.") -> list[Json]:
    """A stream that starts, then reports an ``error`` event."""
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "error", "code": code, "message": message, "param": None},
    ]
    return _numbered(events)


def responses_stream_failed(code: str = "server_error") -> list[Json]:
    """A stream that ends in ``response.failed``."""
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "response.failed", "response": response_failed(code)},
    ]
    return _numbered(events)


def _text_deltas(parts: list[str]) -> list[Json]:
    """A message item and its text part start, then one ``output_text.delta`` per part."""
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": message_item(status="in_progress")},
        {"type": "response.content_part.added", **_TEXT_PART, "part": output_text_part("")},
        *({"type": "response.output_text.delta", **_TEXT_PART, "delta": part, "logprobs": []} for part in parts),
    ]


def _in_progress() -> Json:
    return {**response(status="in_progress", usage=None), "output": []}


def _numbered(events: list[Json]) -> list[Json]:
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


# --- Errors ----------------------------------------------------------------------------


def error_body(message: str, type: str, param: str | None = None, code: str | None = None) -> Json:
    """An ``ErrorResponse``: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def insufficient_quota_error() -> Json:
    """429 body when billing quota is exhausted (not retryable)."""
    return error_body(
        "You exceeded your current quota, please check your plan and billing details. For more information "
        "on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "insufficient_quota",
        code="insufficient_quota",
    )


def rate_limit_error() -> Json:
    """429 body when a tokens-per-minute limit is hit (retryable)."""
    return error_body(
        f"Rate limit reached for {MODEL} in organization org-test on tokens per min (TPM): Limit 200000, "
        "Used 199500, Requested 1000. Please try again in 150ms. "
        "Visit https://platform.openai.com/account/rate-limits to learn more.",
        "tokens",
        code="rate_limit_exceeded",
    )


def context_length_exceeded_error() -> Json:
    """400 body when the prompt does not fit the model's context window."""
    return error_body(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130415 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        param="messages",
        code="context_length_exceeded",
    )


def server_error(status: int = 500) -> Json:
    """5xx body: ``server_error`` for 500, an overload message otherwise."""
    if status == 500:
        return error_body("The server had an error while processing your request. Sorry about that!", "server_error")
    return error_body("The engine is currently overloaded, please try again later.", "server_error")
