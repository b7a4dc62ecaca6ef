"""What a provider says about one of its models (``client.models(provider)``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ModelInfo"]


class ModelInfo(BaseModel):
    """One model a provider serves; a field is ``None`` (or empty) where neither the provider nor
    genai-prices says.

    ``input_parts`` names what a prompt may carry (``"text"``, ``"image"``,
    ``"document"``, ``"audio"``); ``features`` names what the model does
    (``"chat"``, ``"tools"``, ``"embeddings"``, ``"reasoning"``, ...).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    provider: str = ""
    context_window: int | None = None
    max_output_tokens: int | None = None
    input_parts: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    description: str = ""
