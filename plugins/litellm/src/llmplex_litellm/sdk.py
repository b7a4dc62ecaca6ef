"""Import LiteLLM on first use and send requests through it with its own retries off."""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex_litellm.settings import LiteLLMSettings

__all__ = ["LiteLLMClient", "create_client", "load_litellm"]


def load_litellm() -> ModuleType:
    """The ``litellm`` module, configured for use under llmplex.

    Without ``LITELLM_LOCAL_MODEL_COST_MAP`` LiteLLM downloads its price table at
    import (seconds of retries when offline); llmplex defaults it to the bundled
    table. Set the variable to ``False`` yourself to keep the download.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise LLMConfigurationError(
            f"the litellm package cannot be imported ({exc}); install it with: pip install llmplex-litellm"
        ) from exc
    litellm.suppress_debug_info = True
    return litellm


@dataclass(frozen=True)
class LiteLLMClient:
    """The ``litellm`` module plus the instance's connection settings."""

    litellm: ModuleType
    settings: LiteLLMSettings

    def arguments(self, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """Keyword arguments of ``completion``: settings, payload, then what llmplex owns."""
        kwargs: dict[str, Any] = {**self.settings.completion_kwargs, **payload}
        if self.settings.api_base is not None:
            kwargs["api_base"] = self.settings.api_base
        if self.settings.api_key is not None:
            kwargs["api_key"] = self.settings.api_key.get_secret_value()
        kwargs.update(num_retries=0, max_retries=0)
        if payload.get("tools"):
            # Function tools only: skip LiteLLM's MCP-tool bridge, which needs the `mcp` package.
            kwargs["_skip_mcp_handler"] = True
        if timeout is not None:
            kwargs["timeout"] = timeout
        return kwargs

    def completion(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """``litellm.completion``: a ``ModelResponse``, or a chunk stream when ``payload["stream"]``."""
        return self.litellm.completion(**self.arguments(payload, timeout))

    async def acompletion(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """``litellm.acompletion``: a ``ModelResponse``, or an async chunk stream."""
        return await self.litellm.acompletion(**self.arguments(payload, timeout))


def create_client(settings: LiteLLMSettings) -> LiteLLMClient:
    """Import LiteLLM (the first time) and bind it to ``settings``."""
    return LiteLLMClient(load_litellm(), settings)
