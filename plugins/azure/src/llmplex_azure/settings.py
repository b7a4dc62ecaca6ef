"""Settings of an Azure OpenAI resource: its endpoint, API version, and how to authenticate."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

from pydantic import Field, SecretStr

from llmplex.provider import Capabilities, ProviderSettings

__all__ = ["DEFAULT_API_VERSION", "AzureSettings"]

DEFAULT_API_VERSION = "2024-10-21"
"""The latest GA data-plane API version of the deployments API (Chat Completions)."""


class AzureSettings(ProviderSettings):
    """How to reach one Azure OpenAI resource; the model name of ``azure:NAME`` is the deployment's name.

    Attributes:
        endpoint: the resource's endpoint, ``https://RESOURCE.openai.azure.com`` (``AZURE_OPENAI_ENDPOINT``).
        api_key: the resource's key, sent as the ``api-key`` header (``AZURE_OPENAI_API_KEY``).
        api_version: the ``api-version`` of the deployments API (``AZURE_OPENAI_API_VERSION``; default 2024-10-21).
        api: ``"chat"`` (``/openai/deployments/{deployment}/chat/completions``) or ``"responses"``
            (the v1 API's ``/openai/v1/responses``).
        responses_api_version: the ``api-version`` sent to the v1 API (``preview``).
        entra_id: authenticate with Microsoft Entra ID through ``azure-identity``'s ``DefaultAzureCredential``
            instead of a key (``pip install 'llmplex-azure[entra]'``).
        azure_ad_token_provider: a callable returning an Entra ID bearer token (from Python), instead of a key.
        timeout: upper bound of one HTTP request in seconds (the call's deadline may shorten it).
    """

    env_vars = {
        "endpoint": ("AZURE_OPENAI_ENDPOINT",),
        "api_key": ("AZURE_OPENAI_API_KEY",),
        "api_version": ("AZURE_OPENAI_API_VERSION",),
    }

    endpoint: str | None = Field(default=None, pattern=r"^https?://")
    api_key: SecretStr | None = None
    api_version: str = Field(default=DEFAULT_API_VERSION, min_length=1)
    api: Literal["chat", "responses"] = "chat"
    responses_api_version: str = Field(default="preview", min_length=1)
    entra_id: bool = False
    azure_ad_token_provider: Callable[[], str] | None = Field(default=None, exclude=True)
    timeout: float | None = Field(default=None, gt=0)

    def capabilities(self, declared: Capabilities) -> Capabilities:
        """Chat Completions keeps no stored responses and no reasoning items; the Responses API takes no audio."""
        if self.api == "chat":
            return dataclasses.replace(
                declared, response_chains=False, delete_response=False, reasoning_formats=frozenset()
            )
        return dataclasses.replace(declared, input_parts=declared.input_parts - {"audio"})

    def problems(self) -> list[str]:
        """A missing endpoint, or no way to authenticate, naming the variables to set."""
        found = []
        if self.endpoint is None:
            found.append("no Azure OpenAI endpoint: set AZURE_OPENAI_ENDPOINT, or endpoint in [providers.azure]")
        if self.api_key is None and self.azure_ad_token_provider is None and not self.entra_id:
            found.append(
                "no way to authenticate to Azure OpenAI: set AZURE_OPENAI_API_KEY (or api_key), "
                "or entra_id = true for Microsoft Entra ID"
            )
        return found
