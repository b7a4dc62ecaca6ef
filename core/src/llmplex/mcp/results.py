"""An MCP tool result as llmplex content: text for the tool message, parts for the next turn, structured output."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types.media import kind_of
from llmplex.types.parts import Audio, Document, Image
from llmplex.types.tool_result import ToolResult

__all__ = ["tool_result"]

_PART_CLASSES: dict[str, type[Image] | type[Document] | type[Audio]] = {
    "image": Image,
    "document": Document,
    "audio": Audio,
}


def tool_result(result: Any) -> ToolResult:
    """A ``CallToolResult`` (read duck-typed: its ``content`` blocks, ``structured_content`` and ``is_error``).

    Text blocks join as the text; images, audio and embedded blobs of a media
    type llmplex sends become parts (one it cannot send is described in the
    text instead); embedded text resources and resource links are shown as text.
    """
    texts: list[str] = []
    parts: list[Image | Document | Audio] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            _add_blob(block.data, block.mime_type, f"{kind} content", texts, parts)
        elif kind == "resource":
            resource = block.resource
            if hasattr(resource, "text"):
                texts.append(f"[resource {resource.uri}]\n{resource.text}")
            else:
                _add_blob(resource.blob, resource.mime_type or "", f"resource {resource.uri}", texts, parts)
        elif kind == "resource_link":
            shown = " ".join(x for x in (block.name, block.mime_type or "", block.description or "") if x)
            texts.append(f"[resource link {block.uri}: {shown}]")
        else:
            texts.append(f"[content of type {kind!r} that llmplex does not read]")
    structured = getattr(result, "structured_content", None)
    if not texts and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False))
    if parts and not texts:
        texts.append(f"[{len(parts)} attachment(s) follow in the next message]")
    return ToolResult(
        text="\n\n".join(texts), parts=tuple(parts), structured=structured, is_error=bool(result.is_error)
    )


def _add_blob(data: str, media_type: str, what: str, texts: list[str], parts: list[Image | Document | Audio]) -> None:
    """The part for a base64 blob, or a line of text saying why it is not sent."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        texts.append(f"[{what}: {media_type or 'unknown type'}, not valid base64: not sent]")
        return
    part_kind = kind_of(media_type) if media_type else None
    if part_kind is None:
        texts.append(f"[{what}: {media_type or 'unknown type'}, {len(raw)} bytes: a type llmplex does not send]")
        return
    try:
        parts.append(_PART_CLASSES[part_kind].from_bytes(raw, media_type))
    except LLMConfigurationError as exc:
        texts.append(f"[{what}: {media_type}, {len(raw)} bytes, not sent: {exc.message}]")
