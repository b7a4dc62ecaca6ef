"""``POST /embeddings`` and ``GET /models`` through the SDK, reusable by OpenAI-compatible plugins.

- ``embed`` / ``aembed`` ``(client, texts, model, dimensions, timeout) -> Embeddings``
- ``list_models`` ``(client) -> list[ModelInfo]``
"""

from __future__ import annotations

import base64
import math
import sys
from array import array
from collections.abc import Sequence
from typing import Any

from openai import AsyncOpenAI, OpenAI

from llmplex.errors import LLMServerError
from llmplex.types import Embeddings, ModelInfo, Usage

__all__ = ["aembed", "embed", "list_models", "parse_embeddings"]


def _kwargs(texts: Sequence[str], model: str, dimensions: int | None, timeout: float | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"input": list(texts), "model": model, "encoding_format": "float"}
    if dimensions is not None:
        kwargs["dimensions"] = dimensions
    if timeout is not None:
        kwargs["timeout"] = timeout
    return kwargs


def parse_embeddings(raw: Any, model: str) -> Embeddings:
    """A ``CreateEmbeddingResponse`` as core ``Embeddings``, vectors ordered by their ``index``.

    A vector is a list of floats, as asked (``encoding_format: "float"``); a server that answers base64 anyway
    is read as the API documents that encoding (little-endian float32), and anything else is an error.
    """
    data = sorted(raw.data, key=lambda item: item.index)
    usage = getattr(raw, "usage", None)
    tokens = getattr(usage, "prompt_tokens", 0) or 0
    return Embeddings(
        vectors=[_vector(item.embedding, item.index) for item in data],
        usage=Usage(input_tokens=tokens, total_tokens=getattr(usage, "total_tokens", 0) or tokens),
        model=getattr(raw, "model", None) or model,
    )


def _vector(embedding: Any, index: int) -> list[float]:
    if isinstance(embedding, str):
        try:
            packed = base64.b64decode(embedding, validate=True)
        except ValueError:
            packed = b"\x00"  # not base64: refused below
        if not packed or len(packed) % 4:
            raise LLMServerError(f"embedding {index} is text that is not base64 float32 data: {embedding[:40]!r}")
        values = list(array("f", packed) if sys.byteorder == "little" else _swapped(packed))
    elif isinstance(embedding, (list, tuple)):
        values = list(embedding)
    else:
        raise LLMServerError(f"embedding {index} is neither a list of floats nor base64: {type(embedding).__name__}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        raise LLMServerError(f"embedding {index} holds values that are not finite numbers")
    return [float(v) for v in values]


def _swapped(packed: bytes) -> array[float]:
    values = array("f", packed)
    values.byteswap()
    return values


def embed(
    client: OpenAI, texts: Sequence[str], model: str, dimensions: int | None, timeout: float | None
) -> Embeddings:
    """Embed one batch synchronously; the SDK's exceptions propagate."""
    return parse_embeddings(client.embeddings.create(**_kwargs(texts, model, dimensions, timeout)), model)


async def aembed(
    client: AsyncOpenAI, texts: Sequence[str], model: str, dimensions: int | None, timeout: float | None
) -> Embeddings:
    """Async ``embed``."""
    return parse_embeddings(await client.embeddings.create(**_kwargs(texts, model, dimensions, timeout)), model)


def list_models(client: OpenAI) -> list[ModelInfo]:
    """``GET /models``: the ids the server lists (the API says nothing of their limits), sorted."""
    listed = [
        ModelInfo(id=m.id, description=f"owned by {m.owned_by}" if getattr(m, "owned_by", None) else "")
        for m in client.models.list()
    ]
    return sorted(listed, key=lambda m: m.id)
