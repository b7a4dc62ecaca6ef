"""A user message's pieces as OpenAI Chat Completions content parts, the shape many providers take.

``text``, ``image_url`` (the URL or a ``data:`` URL), ``file`` (``file_data`` as a
``data:`` URL, and ``filename``) and ``input_audio`` (base64 ``data`` and
``format``); documents only as bytes. Used by the openai plugin's chat API and
by litellm, which translates this shape for its providers.
"""

from __future__ import annotations

from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types import Audio, ContentPart, Document

__all__ = ["chat_content_part"]


def chat_content_part(piece: ContentPart, index: int, *, provider: str, alternative: str = "") -> dict[str, Any]:
    """``piece`` of ``messages[index]`` as a Chat Completions content part.

    A document given by URL is an `LLMConfigurationError` naming ``provider``
    (e.g. ``"litellm"``) and, when given, an ``alternative`` to bytes.
    """
    if isinstance(piece, str):
        return {"type": "text", "text": piece}
    if isinstance(piece, Audio):
        return {"type": "input_audio", "input_audio": {"data": piece.base64(), "format": piece.format}}
    if isinstance(piece, Document):
        if piece.url is not None:
            raise LLMConfigurationError(
                f"{provider} takes a document only as bytes, not by URL (messages[{index}]: {piece.describe()}); "
                f"use llmplex.Document.from_path / from_bytes{alternative}"
            )
        return {"type": "file", "file": {"filename": piece.filename, "file_data": piece.data_url()}}
    return {"type": "image_url", "image_url": {"url": piece.uri()}}
