"""One call as one row of the ``calls`` table: plain data, no secret, media parts as references.

Pure Python (no SQLAlchemy): rows are built in the calling thread and written by
the background writer. Every string goes through ``llmplex.masking.values.redact``
(keys core knows and key-shaped text are masked); under a secret name
(``api_key``, ``authorization``) or inside headers, values are dropped whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from llmplex.events import CallEnded
from llmplex.masking.values import REDACTED, is_secret_name, redact
from llmplex.types import Message, Request, Response
from llmplex.types.parts import MediaPart

__all__ = ["call_row", "message_data", "prefix_hashes", "thread_hash"]

_USAGE = ("input_tokens", "output_tokens", "total_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens")


def _part_reference(part: MediaPart) -> dict[str, Any]:
    """A media part by reference: its kind, type, size and sha256 (or its URL), never its bytes."""
    reference: dict[str, Any] = {"type": part.kind, "media_type": part.media_type}
    if part.data is not None:
        reference["sha256"] = hashlib.sha256(part.data).hexdigest()
        reference["size"] = len(part.data)
    else:
        reference["url"] = part.url
    return reference


def _piece(piece: Any) -> Any:
    if isinstance(piece, MediaPart):
        return _part_reference(piece)
    if isinstance(piece, BaseModel):  # a part kind added later (reasoning, ...): kept as its own data
        return piece.model_dump(mode="json")
    return piece


def message_data(message: Message) -> dict[str, Any]:
    """``message`` as JSON-ready data; parts of its content become references."""
    data = message.model_dump(mode="json", exclude={"content", "reasoning"}, exclude_defaults=True)
    data["role"] = message.role
    if isinstance(message.content, tuple):
        data["content"] = [_piece(piece) for piece in message.content]
    elif message.content is not None:
        data["content"] = message.content
    data = dict(redact(data))
    reasoning = getattr(message, "reasoning", ())
    if reasoning:  # the provider's opaque state, replayed byte for byte on the next turn: kept as it came
        data["reasoning"] = [part.model_dump(mode="json") for part in reasoning]
    return data


def _answer_data(response: Response) -> dict[str, Any]:
    """The answer: its assistant message (with whatever it carries) plus refusal and structured output."""
    answer = message_data(response.message())
    if response.refusal is not None:
        answer["refusal"] = redact(response.refusal)
    if response.output is not None:
        output = response.output
        answer["output"] = redact(output.model_dump(mode="json") if isinstance(output, BaseModel) else _plain(output))
    return answer


def _plain(value: Any) -> Any:
    """``value`` if it is JSON data, else its text."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def _clean(value: Any, depth: int = 0) -> Any:
    """Options without secret values: secret-named keys and every header value are dropped."""
    if depth > 32:
        return None
    if isinstance(value, Mapping):
        return {
            str(k): REDACTED
            if is_secret_name(str(k))
            else _headers(v)
            if "header" in str(k).lower()
            else _clean(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_clean(v, depth + 1) for v in value]
    return redact(_plain(value))


def _headers(headers: Any) -> Any:
    """Header names only: every value is masked, secret or not."""
    if isinstance(headers, Mapping):
        return {str(name): REDACTED for name in headers}
    return REDACTED


def _options(request: Request) -> dict[str, Any]:
    options: dict[str, Any] = dict(request.config.set_options())
    if request.tools:
        options["tools"] = [tool.name for tool in request.tools]
    if request.tool_choice is not None:
        options["tool_choice"] = request.tool_choice
    if request.output is not None:
        options["output"] = request.output.name
    if request.provider_options:
        options["provider_options"] = _clean(request.provider_options)
    if request.previous_response_id is not None:
        options["previous_response_id"] = request.previous_response_id
    return options


def _canonical(messages: Sequence[Message]) -> list[Any]:
    """What identifies a conversation's turns: roles, texts, tool calls and the calls tool results answer."""
    return [
        [m.role, m.text, [[c.id, c.name, c.arguments] for c in m.tool_calls], m.tool_call_id or ""] for m in messages
    ]


def thread_hash(messages: Sequence[Message]) -> str:
    """A digest of a conversation so far; the next turn's request starts with the same messages."""
    text = json.dumps(_canonical(messages), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def prefix_hashes(messages: Sequence[Message]) -> list[str]:
    """The ``thread_hash`` of every prefix of ``messages`` that ends with an assistant turn, longest first."""
    ends = [i + 1 for i, m in enumerate(messages) if m.role == "assistant"]
    return [thread_hash(messages[:end]) for end in reversed(ends)]


def _last_user_text(messages: Sequence[Message]) -> str | None:
    for message in reversed(messages):
        if message.role in ("user", "tool"):
            return message.text
    return None


def call_row(
    event: CallEnded,
    *,
    bodies: bool = True,
    conversation_id: str | None = None,
    key_name: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The ``calls`` row of a call that ended; ``bodies=False`` keeps only the figures."""
    request, response = event.request, event.response
    ended = now or datetime.now(UTC)
    row: dict[str, Any] = {
        "created_at": (ended - timedelta(seconds=max(event.latency, 0.0))).replace(tzinfo=None),
        "request_id": event.request_id,
        "conversation_id": conversation_id,
        "model_asked": event.asked or f"{event.provider}:{event.model}",
        "provider": event.provider,
        "model": event.model,
        "status": event.status,
        "error_type": event.error_type,
        "latency": event.latency,
        "attempts": event.attempt,
        "cached": bool(response is not None and response.cached),
        "key_name": key_name,
    }
    if response is not None:
        usage = response.usage
        row.update({name: getattr(usage, name) for name in _USAGE})
        row["cost_usd"] = usage.cost_usd
        note = getattr(usage, "cost_note", None)
        if row["cost_usd"] is None and note is None:
            note = f"no price known for {event.provider}:{response.model or event.model}"
        row["cost_note"] = note
        row["finish_reason"] = response.finish_reason
        row["response_id"] = response.response_id
        row["model"] = response.model or event.model
    if request is not None and bodies:
        row["prompt"] = [message_data(m) for m in request.messages]
        row["prompt_text"] = redact(_last_user_text(request.messages))
        row["options"] = _options(request)
        if response is not None:
            row["answer"] = _answer_data(response)
            row["answer_text"] = redact(response.text)
            row["thread_hash"] = thread_hash([*request.messages, response.message()])
    return {key: _storable(value) for key, value in row.items()}


def _storable(value: Any) -> Any:
    """``value`` with lone surrogates (a hostile answer's ``"\\ud800"``) replaced: databases store UTF-8 only."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return value
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable(v) for v in value]
    return value
