"""Embeddings (``models.embed_content``, sent as ``batchEmbedContents``) and the model list (``models.list``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google import genai
from google.genai import types

from llmplex.types import Embeddings, ModelInfo, Usage
from llmplex_gemini.clients import timeout_millis

__all__ = ["EMBEDDING_BATCH_SIZE", "aembed", "embed", "list_models", "model_info"]

EMBEDDING_BATCH_SIZE = 100
"""The most requests one ``batchEmbedContents`` call takes."""

_FEATURES = {"generateContent": "chat", "embedContent": "embeddings", "countTokens": "count_tokens"}


def _config(dimensions: int | None, timeout: float | None) -> types.EmbedContentConfig:
    return types.EmbedContentConfig(
        output_dimensionality=dimensions,
        http_options=None if timeout is None else types.HttpOptions(timeout=timeout_millis(timeout)),
    )


def _parse(raw: types.EmbedContentResponse, model: str) -> Embeddings:
    usage = raw.usage_metadata
    tokens = getattr(usage, "prompt_token_count", None) or 0
    return Embeddings(
        vectors=[list(e.values or ()) for e in raw.embeddings or ()],
        usage=Usage(input_tokens=tokens),
        model=model,
    )


def embed(
    client: genai.Client, texts: Sequence[str], model: str, dimensions: int | None, timeout: float | None
) -> Embeddings:
    """Embed one batch synchronously; the SDK's exceptions propagate."""
    raw = client.models.embed_content(model=model, contents=list(texts), config=_config(dimensions, timeout))
    return _parse(raw, model)


async def aembed(
    client: genai.Client, texts: Sequence[str], model: str, dimensions: int | None, timeout: float | None
) -> Embeddings:
    """Async ``embed``."""
    raw = await client.aio.models.embed_content(model=model, contents=list(texts), config=_config(dimensions, timeout))
    return _parse(raw, model)


def model_info(model: Any) -> ModelInfo:
    """One ``Model`` of ``models.list`` as a ``ModelInfo``: its token limits and supported methods."""
    actions = model.supported_actions or ()
    features = [_FEATURES.get(a, a) for a in actions]
    if getattr(model, "thinking", None):
        features.append("reasoning")
    return ModelInfo(
        id=(model.name or "").removeprefix("models/"),
        context_window=model.input_token_limit,
        max_output_tokens=model.output_token_limit,
        features=tuple(features),
        description=model.display_name or "",
    )


def list_models(client: genai.Client) -> list[ModelInfo]:
    """Every model ``GET /v1beta/models`` lists, across its pages."""
    return [model_info(m) for m in client.models.list()]
