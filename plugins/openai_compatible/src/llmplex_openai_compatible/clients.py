"""The SDK clients of an OpenAI-compatible instance: the openai plugin's, with the instance's key and headers."""

from __future__ import annotations

from llmplex_openai.clients import make_async_client, make_client
from openai import AsyncOpenAI, OpenAI

from llmplex.errors import LLMConfigurationError
from llmplex_openai_compatible.settings import CompatibleSettings, OpenRouterSettings

__all__ = ["create_async_client", "create_client", "headers_of"]


def headers_of(settings: CompatibleSettings) -> dict[str, str]:
    """The extra headers every request carries (OpenRouter's ``HTTP-Referer`` and ``X-Title`` among them)."""
    headers = dict(settings.headers)
    if isinstance(settings, OpenRouterSettings):
        if settings.app_url:
            headers.setdefault("HTTP-Referer", settings.app_url)
        if settings.app_title:
            headers.setdefault("X-Title", settings.app_title)
    return headers


def _key(settings: CompatibleSettings) -> str | None:
    missing = settings.missing_key()
    if missing:
        raise LLMConfigurationError(missing)
    return None if settings.api_key is None else settings.api_key.get_secret_value()


def create_client(settings: CompatibleSettings) -> OpenAI:
    """The sync client (``ProviderInfo.create_client``); ``LLMConfigurationError`` naming the key's variable
    when a remote API has no key."""
    client = make_client(settings.url, _key(settings), timeout=settings.timeout)
    headers = headers_of(settings)
    return client.with_options(default_headers=headers) if headers else client


def create_async_client(settings: CompatibleSettings) -> AsyncOpenAI:
    """The async client (``ProviderInfo.create_async_client``)."""
    client = make_async_client(settings.url, _key(settings), timeout=settings.timeout)
    headers = headers_of(settings)
    return client.with_options(default_headers=headers) if headers else client
