"""``llmplex models PREFIX``: what an OpenAI-compatible server serves (for Ollama, what is pulled)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai
from llmplex_openai import embeddings
from openai import OpenAI

from llmplex.types import ModelInfo
from llmplex_openai_compatible.settings import CompatibleSettings

__all__ = ["list_models", "ollama_tags_url", "pulled_models"]


def ollama_tags_url(api_url: str) -> str:
    """Ollama's native ``/api/tags`` beside its OpenAI-compatible root (``.../v1``)."""
    root = api_url.rstrip("/")
    return root.removesuffix("/v1") + "/api/tags"


def pulled_models(tags: Any) -> list[ModelInfo]:
    """The models of an ``/api/tags`` answer, with their size, parameters and quantization."""
    found: list[ModelInfo] = []
    for item in (tags.get("models") if isinstance(tags, Mapping) else None) or ():
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        details = item.get("details")
        if not isinstance(details, Mapping):
            details = {}
        facts = [
            f"{item['size'] / 1e9:.1f} GB" if isinstance(item.get("size"), int) else "",
            str(details.get("parameter_size") or ""),
            str(details.get("quantization_level") or ""),
        ]
        found.append(ModelInfo(id=item["name"], description=", ".join(f for f in facts if f) + " (pulled)"))
    return sorted(found, key=lambda m: m.id)


def list_models(settings: CompatibleSettings, client: OpenAI) -> list[ModelInfo]:
    """Ollama: its pulled models from ``/api/tags`` (``GET /models`` when that is missing); others ``GET /models``."""
    if settings.preset.lists_pulled_models:
        try:
            tags = client.get(ollama_tags_url(settings.url), cast_to=object)
        except openai.NotFoundError:
            pass
        else:
            return pulled_models(tags)
    return embeddings.list_models(client)
