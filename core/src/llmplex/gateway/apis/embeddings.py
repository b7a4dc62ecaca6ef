"""``POST /v1/embeddings``: the OpenAI Embeddings wire format (float or base64 vectors, ``dimensions``)."""

from __future__ import annotations

import base64
import struct
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.gateway.errors import GatewayError
from llmplex.types import Embeddings

__all__ = ["EmbeddingsRequest", "embeddings_response"]


class EmbeddingsRequest(BaseModel):
    """An embeddings request: one text or a list of texts (token arrays are not served)."""

    model_config = ConfigDict(extra="allow", strict=True)

    model: str = Field(min_length=1)
    input: str | list[str] | list[int] | list[list[int]]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(default=None, ge=1)

    def texts(self) -> list[str]:
        """The texts to embed; a 400 for token arrays or an empty list."""
        if isinstance(self.input, str):
            return [self.input]
        if not self.input:
            raise GatewayError(400, "input must not be empty", param="input")
        if not all(isinstance(item, str) for item in self.input):
            raise GatewayError(
                400, "input must be text or a list of texts (token arrays are not served)", param="input"
            )
        return [str(item) for item in self.input]


def _encoded(vector: list[float], encoding: str) -> Any:
    if encoding == "float":
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def embeddings_response(result: Embeddings, request: EmbeddingsRequest) -> dict[str, Any]:
    """The vectors as an embeddings ``list`` object (base64: little-endian float32, as OpenAI sends)."""
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": _encoded(vector, request.encoding_format)}
            for i, vector in enumerate(result.vectors)
        ],
        "model": request.model,
        "usage": {"prompt_tokens": result.usage.input_tokens, "total_tokens": result.usage.input_tokens},
    }
