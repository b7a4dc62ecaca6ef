"""A user message's text, images, documents and audio as content parts of either API.

Chat Completions: ``text``, ``image_url`` (the URL or a ``data:`` URL), ``file``
(``file_data`` as a ``data:`` URL, and ``filename``) and ``input_audio``
(base64 ``data`` and ``format`` wav/mp3); documents only as bytes. Responses:
``input_text``, ``input_image``, ``input_file`` (``file_data`` and ``filename``,
or ``file_url``); no audio.
"""

from __future__ import annotations

from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.http import chat_content_part
from llmplex.types import Audio, ContentPart, Document, Message

__all__ = ["chat_content", "responses_content"]


def chat_content(message: Message, index: int) -> str | list[dict[str, Any]]:
    """The ``content`` of a Chat Completions message: its text, or a list of parts."""
    if not isinstance(message.content, tuple):
        return message.content or ""
    return [
        chat_content_part(
            piece, index, provider="the OpenAI Chat Completions API", alternative=", or the Responses API"
        )
        for piece in message.content
    ]


def responses_content(message: Message, index: int) -> str | list[dict[str, Any]]:
    """The ``content`` of a Responses API message: its text, or a list of input parts."""
    if not isinstance(message.content, tuple):
        return message.content or ""
    return [_responses_part(piece, index) for piece in message.content]


def _responses_part(piece: ContentPart, index: int) -> dict[str, Any]:
    if isinstance(piece, str):
        return {"type": "input_text", "text": piece}
    if isinstance(piece, Audio):
        raise LLMConfigurationError(
            f"the OpenAI Responses API takes no audio input (messages[{index}]: {piece.describe()}); "
            'use the Chat Completions API (api = "chat") with an audio model such as gpt-4o-audio-preview'
        )
    if isinstance(piece, Document):
        if piece.url is not None:
            return {"type": "input_file", "file_url": piece.url}
        return {"type": "input_file", "filename": piece.filename, "file_data": piece.data_url()}
    return {"type": "input_image", "image_url": piece.uri(), "detail": "auto"}
