"""Settings of the ``llamacpp`` provider."""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import Field, FilePath

from llmplex.provider import Capabilities, ProviderSettings

__all__ = ["AGENT_N_CTX", "LlamaCppSettings"]


AGENT_N_CTX = 32768
"""The context window a server started through the plugin gets: Claude Code's first prompt (its system prompt
and two dozen tools, about 20,000 tokens) and Codex's (about 10,000) fit with room for the answer."""


class LlamaCppSettings(ProviderSettings):
    """How the local server runs.

    Attributes:
        n_ctx: the context window in tokens (prompt + answer), shared by the server's two slots; the
            default holds a coding agent's first prompt (Claude Code's is about 20,000 tokens).
        start_timeout: seconds to wait for a server to load its model.
        default_max_tokens: the answer length when a request sets no ``max_tokens``
            (a base model such as gemma3-270m rarely stops by itself).
        timeout: upper bound of one HTTP request in seconds (the deadline may shorten it).
        mmproj: the multimodal projector GGUF of a vision model (its image encoder, published
            next to the model as ``mmproj-*.gguf``); with it the server reads images, without it
            images are refused before sending.
        embedding_pooling: how llama.cpp turns token vectors into one vector per text when it embeds
            with a GGUF model (``llamacpp:/path/model.gguf``): ``model`` keeps the pooling the GGUF
            declares (BERT-style embedding models do), else ``mean``, ``cls`` or ``last`` (decoder
            models). The built-in ONNX embedding model always mean-pools.
    """

    n_ctx: int = Field(default=AGENT_N_CTX, ge=256)
    start_timeout: float = Field(default=120.0, gt=0)
    default_max_tokens: int = Field(default=256, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    mmproj: FilePath | None = None
    embedding_pooling: Literal["model", "mean", "cls", "last"] = "model"

    def capabilities(self, declared: Capabilities) -> Capabilities:
        """Images only with a vision projector (``mmproj``)."""
        if self.mmproj is None:
            return declared
        return dataclasses.replace(declared, input_parts=declared.input_parts | {"image"})
