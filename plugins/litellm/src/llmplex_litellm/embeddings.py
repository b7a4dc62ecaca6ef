"""Embeddings through ``litellm.embedding`` and the model list from LiteLLM's ``model_cost`` map."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmplex.types import Embeddings, ModelInfo, Usage

__all__ = ["EMBEDDING_BATCH_SIZE", "embedding_payload", "list_models", "parse_embeddings"]

EMBEDDING_BATCH_SIZE = 100
"""Texts per ``litellm.embedding`` call unless ``batch_size`` says otherwise (a size most providers take)."""

_PARTS = {"supports_vision": "image", "supports_pdf_input": "document", "supports_audio_input": "audio"}
_FEATURES = {
    "supports_function_calling": "tools",
    "supports_response_schema": "structured_output",
    "supports_reasoning": "reasoning",
    "supports_prompt_caching": "prompt_caching",
    "supports_web_search": "web_search",
}


def embedding_payload(texts: Sequence[str], model: str, dimensions: int | None) -> dict[str, Any]:
    """The keyword arguments of ``litellm.embedding`` for one batch."""
    payload: dict[str, Any] = {"model": model, "input": list(texts)}
    if dimensions is not None:
        payload["dimensions"] = dimensions
    return payload


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def parse_embeddings(raw: Any, model: str) -> Embeddings:
    """An ``EmbeddingResponse`` (items are dicts or objects) as core ``Embeddings``, ordered by ``index``."""
    data = sorted(raw.data or (), key=lambda item: _field(item, "index") or 0)
    usage = getattr(raw, "usage", None)
    tokens = getattr(usage, "prompt_tokens", 0) or 0
    return Embeddings(
        vectors=[list(_field(item, "embedding")) for item in data],
        usage=Usage(input_tokens=tokens, total_tokens=getattr(usage, "total_tokens", 0) or tokens),
        model=getattr(raw, "model", None) or model,
    )


def _model_info(name: str, entry: Mapping[str, Any]) -> ModelInfo:
    mode = entry.get("mode") or ""
    features = ["chat" if mode == "chat" else "embeddings" if mode == "embedding" else mode] if mode else []
    features += [feature for key, feature in _FEATURES.items() if entry.get(key)]
    parts = ("text", *(part for key, part in _PARTS.items() if entry.get(key)))
    context = entry.get("max_input_tokens") or entry.get("max_tokens")
    return ModelInfo(
        id=name,
        context_window=context if isinstance(context, int) else None,
        max_output_tokens=entry.get("max_output_tokens") if isinstance(entry.get("max_output_tokens"), int) else None,
        input_parts=parts,
        features=tuple(features),
        description=str(entry.get("litellm_provider") or ""),
    )


def list_models(model_cost: Mapping[str, Any]) -> list[ModelInfo]:
    """Every model of LiteLLM's ``model_cost`` map (its bundled table), sorted by id."""
    return [
        _model_info(name, entry)
        for name, entry in sorted(model_cost.items())
        if name != "sample_spec" and isinstance(entry, Mapping)
    ]
