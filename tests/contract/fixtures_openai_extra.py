"""More wire-exact OpenAI payload builders, next to :mod:`tests.contract.fixtures_openai`.

Failed and incomplete responses, refusals and errors inside streams. Each is
validated against the vendored OpenAPI spec in ``test_openai_payloads.py``.
"""

from __future__ import annotations

from tests.contract import fixtures_openai as fx

Json = fx.Json


def response_failed(code: str = "server_error", message: str = "The model failed to generate a response.") -> Json:
    """A ``Response`` with status failed and its ``error``."""
    body = fx.response(status="failed", usage=None)
    return {**body, "output": [], "error": {"code": code, "message": message}}


def chat_stream_refusal(parts: list[str] | None = None) -> list[Json]:
    """Chunks of a streamed refusal: ``delta.refusal`` fragments, finish, usage."""
    chunks = [fx.chat_chunk({"role": "assistant", "content": None, "refusal": ""})]
    chunks += [fx.chat_chunk({"refusal": part}) for part in (parts or ["I'm sorry, ", "I can't help with that."])]
    return [*chunks, fx.chat_chunk({}, finish_reason="stop"), fx.chat_usage_chunk()]


def responses_stream_incomplete(parts: list[str] | None = None, *, usage: fx.TokenUsage | None = None) -> list[Json]:
    """A streamed answer cut by ``max_output_tokens``: text deltas, then ``response.incomplete``."""
    parts = parts or ['{"name": "Par', 'is", "coun']
    text = "".join(parts)
    where = {"item_id": fx.MESSAGE_ID, "output_index": 0, "content_index": 0}
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "response.output_item.added", "output_index": 0, "item": fx.message_item(status="in_progress")},
        {"type": "response.content_part.added", **where, "part": fx.output_text_part("")},
        *({"type": "response.output_text.delta", **where, "delta": part, "logprobs": []} for part in parts),
        {"type": "response.incomplete", "response": fx.response_incomplete(text, usage or fx.TokenUsage())},
    ]
    return _numbered(events)


def responses_stream_refusal(refusal: str = "I'm sorry, I can't help with that.") -> list[Json]:
    """A streamed refusal: ``response.refusal.delta`` events, then ``response.completed``."""
    where = {"item_id": fx.MESSAGE_ID, "output_index": 0, "content_index": 0}
    events: list[Json] = [
        {"type": "response.created", "response": _in_progress()},
        {"type": "response.output_item.added", "output_index": 0, "item": fx.message_item(status="in_progress")},
        {"type": "response.refusal.delta", **where, "delta": refusal},
        {"type": "response.refusal.done", **where, "refusal": refusal},
        {"type": "response.completed", "response": fx.response_refusal(refusal)},
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


def _in_progress() -> Json:
    return {**fx.response(status="in_progress", usage=None), "output": []}


def _numbered(events: list[Json]) -> list[Json]:
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]
