"""Import LiteLLM on first use and send requests through it with its own retries off."""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.http import honour_deadline
from llmplex.urls import split_query
from llmplex_litellm.settings import LiteLLMSettings

__all__ = ["LiteLLMClient", "create_async_client", "create_client", "load_litellm"]


def load_litellm() -> ModuleType:
    """The ``litellm`` module, configured for use under llmplex.

    Without ``LITELLM_LOCAL_MODEL_COST_MAP`` LiteLLM downloads its price table at
    import (seconds of retries when offline); llmplex defaults it to the bundled
    table. Set the variable to ``False`` yourself to keep the download. LiteLLM's
    ``DEFAULT_MAX_RETRIES`` is set to 0: retries happen once, in core.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise LLMConfigurationError(
            f"the litellm package cannot be imported ({exc}); install it with: pip install llmplex-litellm"
        ) from exc
    litellm.suppress_debug_info = True
    # Some LiteLLM routes (OpenAI embeddings) read `max_retries or DEFAULT_MAX_RETRIES`, so the
    # max_retries=0 llmplex passes would become 2 SDK retries under core's own: make the default 0.
    setattr(litellm, "DEFAULT_MAX_RETRIES", 0)  # noqa: B010 (not in its stubs)
    return litellm


@dataclass(frozen=True)
class LiteLLMClient:
    """The ``litellm`` module plus the instance's connection settings.

    ``query_client``: when ``api_base`` has a query string (a gateway's ``?key=...``),
    the OpenAI SDK client that sends it as its default query, handed to LiteLLM's
    OpenAI-compatible route (LiteLLM would glue paths after the query); ``None`` otherwise.
    """

    litellm: ModuleType
    settings: LiteLLMSettings
    query_client: Any = None

    def arguments(self, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """Keyword arguments of ``completion``: settings, payload, then what llmplex owns."""
        kwargs: dict[str, Any] = {**self.settings.completion_kwargs, **payload}
        if self.settings.api_base is not None:
            kwargs["api_base"] = split_query(self.settings.api_base)[0]
        if self.query_client is not None:
            kwargs["client"] = self._checked_query_client(str(payload.get("model", "")))
        if self.settings.api_key is not None:
            kwargs["api_key"] = self.settings.api_key.get_secret_value()
        kwargs.update(num_retries=0, max_retries=0)
        if payload.get("tools"):
            # Function tools only: skip LiteLLM's MCP-tool bridge, which needs the `mcp` package.
            kwargs["_skip_mcp_handler"] = True
        if timeout is not None:
            kwargs["timeout"] = timeout
        return kwargs

    def _checked_query_client(self, model: str) -> Any:
        provider = self.litellm.get_llm_provider(model=model)[1]
        if provider != "openai":
            raise LLMConfigurationError(
                f"api_base has query parameters, which LiteLLM can send only to OpenAI-compatible servers "
                f"('litellm:openai/<model>'), not to {provider!r}; drop the query from api_base or use the "
                "provider's own llmplex plugin"
            )
        return self.query_client

    def completion(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """``litellm.completion``: a ``ModelResponse``, or a chunk stream when ``payload["stream"]``."""
        return self.litellm.completion(**self.arguments(payload, timeout))

    async def acompletion(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """``litellm.acompletion``: a ``ModelResponse``, or an async chunk stream."""
        return await self.litellm.acompletion(**self.arguments(payload, timeout))

    def embedding(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """``litellm.embedding`` (``model``, ``input``, ``dimensions``): an ``EmbeddingResponse``."""
        return self.litellm.embedding(**self.arguments(payload, timeout))

    async def aembedding(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """``litellm.aembedding``."""
        return await self.litellm.aembedding(**self.arguments(payload, timeout))

    def close(self) -> None:
        """Close the sync query client, if any (LiteLLM's own clients are LiteLLM's)."""
        if self.query_client is not None:
            self.query_client.close()

    async def aclose(self) -> None:
        """Close the async query client, if any."""
        if self.query_client is not None:
            await self.query_client.close()


def _query_client(settings: LiteLLMSettings, asynchronous: bool) -> Any:
    """An OpenAI SDK client sending ``api_base``'s query string with every request; ``None`` without a query."""
    base, query = split_query(settings.api_base) if settings.api_base is not None else ("", {})
    if not query:
        return None
    import openai

    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    options: dict[str, Any] = {"base_url": base, "api_key": key, "default_query": query, "max_retries": 0}
    if asynchronous:
        return openai.AsyncOpenAI(**options, http_client=honour_deadline(openai.DefaultAsyncHttpxClient()))
    return openai.OpenAI(**options, http_client=honour_deadline(openai.DefaultHttpxClient()))


def create_client(settings: LiteLLMSettings) -> LiteLLMClient:
    """Import LiteLLM (the first time) and bind it to ``settings``."""
    return LiteLLMClient(load_litellm(), settings, _query_client(settings, asynchronous=False))


def create_async_client(settings: LiteLLMSettings) -> LiteLLMClient:
    """``create_client`` for async calls (one per event loop, as core keeps them)."""
    return LiteLLMClient(load_litellm(), settings, _query_client(settings, asynchronous=True))
