"""Build the SDK clients for one provider instance: httpx2 on both paths, retries off."""

from __future__ import annotations

from typing import Any

import httpx2
from google import genai
from google.genai import types

from llmplex.errors import LLMConfigurationError
from llmplex_gemini.settings import GeminiSettings

__all__ = ["LOCAL_PLACEHOLDER_KEY", "create_async_client", "create_client", "timeout_millis"]

LOCAL_PLACEHOLDER_KEY = "llmplex-local-no-key"
"""Sent to a ``base_url`` server configured without a key."""


def timeout_millis(seconds: float) -> int:
    """The SDK's timeout unit: whole milliseconds, at least one."""
    return max(int(seconds * 1000), 1)


def _client(settings: GeminiSettings, **transport: Any) -> genai.Client:
    if settings.api_key is not None:
        key = settings.api_key.get_secret_value()
    elif settings.base_url is not None:
        key = LOCAL_PLACEHOLDER_KEY
    else:
        raise LLMConfigurationError(
            "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or api_key in the provider's config table"
        )
    options = types.HttpOptions(
        base_url=settings.base_url,
        timeout=None if settings.timeout is None else timeout_millis(settings.timeout),
        retry_options=types.HttpRetryOptions(attempts=1),
        **transport,
    )
    return genai.Client(vertexai=False, api_key=key, http_options=options)


def create_client(settings: GeminiSettings) -> genai.Client:
    """The sync SDK client (``client.models``)."""
    return _client(settings, httpx_client=httpx2.Client(follow_redirects=True))


def create_async_client(settings: GeminiSettings) -> genai.Client:
    """The client whose ``.aio`` serves async calls, pinned to httpx2 rather than aiohttp."""
    return _client(settings, httpx_async_client=httpx2.AsyncClient(follow_redirects=True))
