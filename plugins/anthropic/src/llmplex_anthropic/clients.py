"""Build the SDK clients for one provider instance: retries off, key always explicit."""

from __future__ import annotations

from typing import Any

import anthropic

from llmplex.errors import LLMConfigurationError
from llmplex.http import honour_deadline, sdk_async_client
from llmplex.urls import split_query
from llmplex_anthropic import lean
from llmplex_anthropic.settings import AnthropicSettings

__all__ = ["LOCAL_PLACEHOLDER_KEY", "create_async_client", "create_client"]

LOCAL_PLACEHOLDER_KEY = "llmplex-local-no-key"
"""Sent to a ``base_url`` server configured without a key (local servers ignore it)."""


def _client_options(settings: AnthropicSettings) -> dict[str, Any]:
    if settings.api_key is not None:
        key = settings.api_key.get_secret_value()
    elif settings.base_url is not None:
        key = LOCAL_PLACEHOLDER_KEY
    else:
        raise LLMConfigurationError(
            "no Anthropic API key: set ANTHROPIC_API_KEY, or api_key in the provider's config table"
        )
    options: dict[str, Any] = {"api_key": key, "max_retries": 0}
    if settings.base_url is not None:
        options["base_url"], query = split_query(settings.base_url)
        if query:
            options["default_query"] = query  # a gateway's ?key=...: the SDK would append paths after it
    if settings.timeout is not None:
        options["timeout"] = settings.timeout
    return options


def create_client(settings: AnthropicSettings) -> anthropic.Anthropic:
    """The sync SDK client; core retries, so the SDK never does; requests hold to the call's deadline.

    Its ``httpx2`` client also carries the lean ``messages.create`` (``llmplex_anthropic.lean``).
    """
    http_client = honour_deadline(anthropic.DefaultHttpxClient())
    client = anthropic.Anthropic(**_client_options(settings), http_client=http_client)
    lean.register(client, http_client)
    return client


def create_async_client(settings: AnthropicSettings) -> anthropic.AsyncAnthropic:
    """The async SDK client (one per event loop); core retries, so the SDK never does.

    It sends through the SDK's aiohttp transport (``llmplex.http.sdk_async_client``) for many requests in flight.
    """
    http_client = sdk_async_client(anthropic)
    client = anthropic.AsyncAnthropic(**_client_options(settings), http_client=http_client)
    lean.register(client, http_client)
    return client
