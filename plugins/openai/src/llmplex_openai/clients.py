"""Build the official SDK's clients: no SDK retries, no credentials read from the environment.

``make_client`` / ``make_async_client`` are reusable by other plugins that
talk to an OpenAI-compatible server (``base_url`` and an optional ``api_key``).
"""

from __future__ import annotations

from typing import Any

import openai
from openai import AsyncOpenAI, DefaultHttpxClient, OpenAI

from llmplex.errors import LLMConfigurationError
from llmplex.http import honour_deadline, sdk_async_client
from llmplex.urls import split_query
from llmplex_openai.settings import OpenAISettings

__all__ = [
    "KEYLESS_PLACEHOLDER",
    "create_async_client",
    "create_client",
    "make_async_client",
    "make_client",
    "request_timeout",
]

KEYLESS_PLACEHOLDER = "llmplex-no-key"
"""The key sent to servers that need none (the SDK insists on one)."""


def _options(
    base_url: str, api_key: str | None, organization: str | None, project: str | None, timeout: float | None
) -> dict[str, Any]:
    root, query = split_query(base_url)
    options: dict[str, Any] = {
        "base_url": root,
        "api_key": api_key or KEYLESS_PLACEHOLDER,
        "organization": organization,
        "project": project,
        "max_retries": 0,
    }
    if query:
        options["default_query"] = query
    if timeout is not None:
        options["timeout"] = timeout
    return options


def _pin_identity(client: OpenAI | AsyncOpenAI, organization: str | None, project: str | None) -> None:
    # The SDK fills these from OPENAI_ORG_ID / OPENAI_PROJECT_ID when given None; an
    # instance gets only what its own settings say, so nothing leaks to other servers.
    client.organization = organization
    client.project = project


def make_client(
    base_url: str,
    api_key: str | None = None,
    *,
    organization: str | None = None,
    project: str | None = None,
    timeout: float | None = None,
) -> OpenAI:
    """A sync SDK client for ``base_url`` with ``max_retries=0`` (a placeholder key when none is given),
    whose requests hold to the llmplex call's deadline (``llmplex.http.honour_deadline``).

    A query string in ``base_url`` (``?key=...`` for some gateways) is sent with every
    request as the SDK's ``default_query``.
    """
    http_client = honour_deadline(DefaultHttpxClient())
    client = OpenAI(**_options(base_url, api_key, organization, project, timeout), http_client=http_client)
    _pin_identity(client, organization, project)
    return client


def make_async_client(
    base_url: str,
    api_key: str | None = None,
    *,
    organization: str | None = None,
    project: str | None = None,
    timeout: float | None = None,
) -> AsyncOpenAI:
    """Async twin of ``make_client`` (build one per event loop), on the SDK's aiohttp transport
    (``llmplex.http.sdk_async_client``) for many requests in flight."""
    http_client = sdk_async_client(openai)
    client = AsyncOpenAI(**_options(base_url, api_key, organization, project, timeout), http_client=http_client)
    _pin_identity(client, organization, project)
    return client


def _key(settings: OpenAISettings) -> str | None:
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    if settings.is_openai:
        raise LLMConfigurationError(
            "no OpenAI API key: set OPENAI_API_KEY, or api_key in the [providers.openai] table of your config"
        )
    return None


def create_client(settings: OpenAISettings) -> OpenAI:
    """The sync client of one provider instance (``ProviderInfo.create_client``)."""
    return make_client(
        settings.url,
        _key(settings),
        organization=settings.organization,
        project=settings.project,
        timeout=settings.timeout,
    )


def create_async_client(settings: OpenAISettings) -> AsyncOpenAI:
    """The async client of one provider instance (``ProviderInfo.create_async_client``)."""
    return make_async_client(
        settings.url,
        _key(settings),
        organization=settings.organization,
        project=settings.project,
        timeout=settings.timeout,
    )


def request_timeout(deadline_left: float | None, configured: float | None) -> float | None:
    """The per-call SDK timeout: the shorter of the time left before the deadline and the configured one.

    ``None`` means "use the client's default" (the caller then omits the argument).
    """
    if deadline_left is None:
        return configured
    if configured is None:
        return deadline_left
    return min(deadline_left, configured)
