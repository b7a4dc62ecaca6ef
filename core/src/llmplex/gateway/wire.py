"""Helpers every wire translation shares: reading a validated body, media parts, ids, usage figures."""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import time
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from llmplex.errors import LLMConfigurationError
from llmplex.gateway.errors import GatewayError
from llmplex.types import Audio, Document, Image, Message, Usage

__all__ = [
    "MAX_TOKENS",
    "dumps",
    "media_from_data_url",
    "new_id",
    "now",
    "parse_body",
    "part_from_base64",
    "tool_result",
    "usage_or_empty",
]

M = TypeVar("M", bound=BaseModel)

MAX_TOKENS = 2**31 - 1
"""The largest token count a request may ask for (no API takes more; a larger number is a client's bug)."""


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (UTF-8, no ASCII escaping), by orjson: every answer and stream event is one.

    What orjson refuses (an integer beyond 64 bits) is written by the standard library instead.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def new_id(prefix: str) -> str:
    """A fresh id such as ``chatcmpl-9f2c...``."""
    return f"{prefix}{secrets.token_hex(12)}"


def now() -> int:
    """Unix time in whole seconds (the APIs' ``created``)."""
    return int(time.time())


def parse_body(body: bytes, model: type[M]) -> M:
    """``body`` validated as ``model``; a 400 naming the first problem (and its field) when it is not.

    The JSON is read by pydantic's parser, which refuses nesting deeper than about 200 levels (no API
    request nests that deep) with a ``json_invalid`` error instead of exhausting the stack.
    """
    if not body.strip():
        raise GatewayError(400, "the request body is empty; send a JSON object", kind="invalid_json")
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise _invalid(exc) from None
    except (LLMConfigurationError, ValueError) as exc:
        raise GatewayError(400, str(exc), kind="invalid_request") from None


def _invalid(error: ValidationError) -> GatewayError:
    errors = error.errors(include_url=False, include_input=False)
    first = max(errors, key=lambda item: len(item["loc"]))  # the deepest: in a union, the branch that came closest
    if first["type"] in ("json_invalid", "json_type", "model_type") and not first["loc"]:
        reason = "is not JSON" if first["type"] == "json_invalid" else "is not a JSON object"
        return GatewayError(400, f"the request body {reason}: {first['msg']}", kind="invalid_json")
    param = ".".join(str(part) for part in first["loc"])
    count = error.error_count()
    more = f" (and {count - 1} more problem{'s' if count > 2 else ''})" if count > 1 else ""
    return GatewayError(400, f"invalid request: {param}: {first['msg']}{more}", param=param or None)


def media_from_data_url(url: str, kind: str) -> Image | Document | Audio:
    """A ``data:TYPE;base64,...`` URL as an image or document part; an http(s) URL as a linked part."""
    if url.startswith("data:"):
        head, comma, data = url.partition(",")
        if not comma or not head.endswith(";base64"):
            raise GatewayError(400, f"the {kind}'s data URL must be base64: data:<type>;base64,<data>")
        return part_from_base64(kind, data, head[5:-7] or None)
    if not url.startswith(("http://", "https://")):
        raise GatewayError(400, f"the {kind} URL must be http(s) or a data: URL")
    try:
        return Image.from_url(url) if kind == "image" else Document.from_url(url)
    except LLMConfigurationError as exc:
        raise GatewayError(400, str(exc)) from None


def part_from_base64(kind: str, data: str, media_type: str | None) -> Image | Document | Audio:
    """An image, document or audio part from base64 text (its type told from its bytes when not given)."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise GatewayError(400, f"the {kind}'s data is not valid base64") from None
    try:
        if kind == "image":
            return Image.from_bytes(raw, media_type)
        if kind == "audio":
            return Audio.from_bytes(raw, media_type)
        return Document.from_bytes(raw, media_type)
    except LLMConfigurationError as exc:
        raise GatewayError(400, str(exc)) from None


def usage_or_empty(usage: Usage | None) -> Usage:
    """``usage``, or no tokens when the provider reported none."""
    return usage if usage is not None else Usage()


def tool_result(
    call_id: str, texts: list[str], parts: list[Any], *, is_error: bool = False, cache: bool = False
) -> tuple[Message, list[Any]]:
    """A tool result as the tool loop sends one: the tool message (its text, and how many attachments follow),
    and the pieces of the user message that carries its images and documents (empty when it has none)."""
    text = "\n\n".join(texts)
    pieces: list[Any] = []
    if parts:
        count = len(parts)
        note = f"[{count} attachment{'s follow' if count > 1 else ' follows'}]"
        text = f"{text}\n\n{note}" if text else note
        pieces = [f"Attachments returned by tool call {call_id}:", *parts]
    content = f"error: {text}" if is_error else text
    return Message(role="tool", tool_call_id=call_id, content=content, cache=cache), pieces
