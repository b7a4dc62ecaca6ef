"""The openai SDK's Azure clients for one resource: no SDK retries, the call's deadline held, a key or a token.

The async client's request hooks are ``honour_deadline``'s and ``strip_key_on_redirect`` (what openai 3.x's
Azure client adds as its own hook: a request redirected to another origin loses its ``api-key``), vouched for
(``llmplex.http.direct.vouch_for_redirect_hooks``): it changes nothing on the request the client posts, so whole
answers go straight on the aiohttp session, and httpx, following a redirect, runs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import openai
from openai import AsyncAzureOpenAI, AzureOpenAI, DefaultHttpxClient

from llmplex.errors import LLMConfigurationError
from llmplex.http import honour_deadline, sdk_async_client
from llmplex.http.direct import vouch_for_redirect_hooks
from llmplex_azure.settings import AzureSettings

__all__ = ["AUTH_ORIGIN", "ENTRA_SCOPE", "create_async_client", "create_client", "origin", "strip_key_on_redirect"]

AUTH_ORIGIN = "openai.azure_auth_origin"
"""The request extension naming the origin (scheme, host, port) an ``api-key`` was meant for, as openai 3.x sets it."""

ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"
"""The scope of an Entra ID token for Azure OpenAI."""


def _entra_token_provider() -> Callable[[], str]:
    try:
        identity: Any = importlib.import_module("azure.identity")
    except ImportError as exc:
        raise LLMConfigurationError(
            "entra_id = true needs azure-identity: pip install 'llmplex-azure[entra]' (or azure-identity)"
        ) from exc
    provider: Callable[[], str] = identity.get_bearer_token_provider(identity.DefaultAzureCredential(), ENTRA_SCOPE)
    return provider


def _options(settings: AzureSettings) -> dict[str, Any]:
    problems = settings.problems()
    if problems:
        raise LLMConfigurationError("; ".join(problems))
    assert settings.endpoint is not None
    options: dict[str, Any] = {"max_retries": 0, "organization": None, "project": None}
    if settings.api_key is not None:
        options["api_key"] = settings.api_key.get_secret_value()
    else:
        options["azure_ad_token_provider"] = settings.azure_ad_token_provider or _entra_token_provider()
    if settings.timeout is not None:
        options["timeout"] = settings.timeout
    if settings.api == "responses":
        options["base_url"] = settings.endpoint.rstrip("/") + "/openai/v1/"
        options["api_version"] = settings.responses_api_version
    else:
        options["azure_endpoint"] = settings.endpoint
        options["api_version"] = settings.api_version
    return options


def _pin(client: AzureOpenAI | AsyncAzureOpenAI) -> None:
    # The SDK fills these from OPENAI_ORG_ID / OPENAI_PROJECT_ID when given None: Azure gets neither.
    client.organization = None
    client.project = None


def create_client(settings: AzureSettings) -> AzureOpenAI:
    """The sync client (``ProviderInfo.create_client``); ``LLMConfigurationError`` naming what to set."""
    client = AzureOpenAI(**_options(settings), http_client=honour_deadline(DefaultHttpxClient()))
    _pin(client)
    return client


def origin(url: Any) -> tuple[str, str, int | None]:
    """The origin of an httpx ``URL``: scheme, host and port (the scheme's default when none is written)."""
    port = url.port
    if port is None:
        port = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


async def strip_key_on_redirect(request: Any) -> None:
    """Drop the ``api-key`` of a request sent to another origin than the one ``AUTH_ORIGIN`` names (a redirect)."""
    meant = request.extensions.get(AUTH_ORIGIN)
    if meant is not None and meant != origin(request.url):
        request.headers.pop("api-key", None)


def create_async_client(settings: AzureSettings) -> AsyncAzureOpenAI:
    """The async client (``ProviderInfo.create_async_client``), on the SDK's aiohttp transport; its request hooks
    end with ``strip_key_on_redirect`` (in place of the SDK's own, where it has one)."""
    client = AsyncAzureOpenAI(**_options(settings), http_client=sdk_async_client(openai))
    _pin(client)
    hooks = client._client.event_hooks["request"]
    hooks[:] = [hook for hook in hooks if getattr(hook, "__module__", None) != "openai.lib.azure"]
    hooks.append(strip_key_on_redirect)
    vouch_for_redirect_hooks(client._client, [strip_key_on_redirect])
    return client
