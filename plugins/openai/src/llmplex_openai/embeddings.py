"""``POST /embeddings`` and ``GET /models`` through the SDK, reusable by OpenAI-compatible plugins.

- ``embed`` / ``aembed`` ``(client, texts, model, dimensions, timeout) -> Embeddings``
- ``list_models`` ``(client) -> list[ModelInfo]``
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openai import AsyncOpenAI, OpenAI

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
    """A ``CreateEmbeddingResponse`` as core ``Embeddings``, vectors ordered by their ``index``."""
    data = sorted(raw.data, key=lambda item: item.index)
    usage = getattr(raw, "usage", None)
    tokens = getattr(usage, "prompt_tokens", 0) or 0
    return Embeddings(
        vectors=[list(item.embedding) for item in data],
        usage=Usage(input_tokens=tokens, total_tokens=getattr(usage, "total_tokens", 0) or tokens),
        model=getattr(raw, "model", None) or model,
    )


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
