"""Settings of the ``llamacpp`` provider."""

from __future__ import annotations

from pydantic import Field

from llmplex.provider import ProviderSettings

__all__ = ["LlamaCppSettings"]


class LlamaCppSettings(ProviderSettings):
    """How the local server runs.

    Attributes:
        n_ctx: the context window in tokens (prompt + answer).
        start_timeout: seconds to wait for a server to load its model.
        default_max_tokens: the answer length when a request sets no ``max_tokens``
            (a base model such as gemma3-270m rarely stops by itself).
        timeout: upper bound of one HTTP request in seconds (the deadline may shorten it).
    """

    n_ctx: int = Field(default=4096, ge=256)
    start_timeout: float = Field(default=120.0, gt=0)
    default_max_tokens: int = Field(default=256, gt=0)
    timeout: float | None = Field(default=None, gt=0)
