"""The SDK clients of one Vertex AI instance: google-genai in Vertex mode and anthropic's Vertex client.

Both share one set of Google credentials (application defaults, a credentials
file, or an access token), refreshed by the SDKs; both send through llmplex's
deadline-holding httpx2 clients with the SDKs' own retries off. Each family's
client is built when a model of that family is first called.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import google.auth
import google.auth.exceptions
import google.oauth2.credentials
import google.oauth2.service_account
import httpx2
from google import genai
from google.genai import types

from llmplex.errors import LLMConfigurationError
from llmplex.http import async_client, honour_deadline, sdk_async_client, sync_client
from llmplex_vertex.settings import DEFAULT_LOCATION, VertexSettings, checked_project

__all__ = ["SCOPES", "VertexClients", "close_clients", "create_async_clients", "create_clients"]

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
"""The OAuth scope Vertex AI's generateContent and rawPredict need."""


def _credentials(settings: VertexSettings) -> tuple[Any, str | None]:
    """The credentials and the project they name (``None`` for a bare access token)."""
    if settings.access_token is not None:
        token_credentials: Any = google.oauth2.credentials.Credentials  # google-auth's constructors are unannotated
        return token_credentials(token=settings.access_token.get_secret_value()), None
    try:
        if settings.credentials_file is not None:
            return _from_file(settings.credentials_file)
        found: tuple[Any, str | None] = google.auth.default(scopes=list(SCOPES))
        return found
    except google.auth.exceptions.DefaultCredentialsError as error:
        raise LLMConfigurationError(
            f"no Google Cloud credentials for Vertex AI: {error}. Run 'gcloud auth application-default login', "
            "set GOOGLE_APPLICATION_CREDENTIALS or credentials_file, or access_token in [providers.vertex]"
        ) from None


def _from_file(path: str) -> tuple[Any, str | None]:
    """A service-account or authorized-user key file; other kinds (external accounts run commands or fetch
    configured URLs) are refused: give them to application default credentials instead."""
    try:
        with open(path, encoding="utf-8") as file:
            info = json.load(file)
    except (OSError, ValueError) as error:
        raise LLMConfigurationError(f"credentials_file {path!r} could not be read as JSON: {error}") from None
    kind = info.get("type") if isinstance(info, dict) else None
    if kind == "service_account":
        account: Any = google.oauth2.service_account.Credentials  # google-auth's constructors are unannotated
        return account.from_service_account_info(info, scopes=list(SCOPES)), info.get("project_id")
    if kind == "authorized_user":
        user: Any = google.oauth2.credentials.Credentials
        return user.from_authorized_user_info(info, scopes=list(SCOPES)), info.get("quota_project_id")
    raise LLMConfigurationError(
        f"credentials_file {path!r} is of type {kind!r}: give a service_account or authorized_user key file, "
        "or use application default credentials (GOOGLE_APPLICATION_CREDENTIALS) for other kinds"
    )


@dataclass
class VertexClients:
    """The clients of one instance (one per event loop when async); each family's is built on first use."""

    settings: VertexSettings
    asynchronous: bool
    _credentials: tuple[Any, str | None] | None = field(default=None, repr=False)
    _gemini: genai.Client | None = field(default=None, repr=False)
    _anthropic: Any = field(default=None, repr=False)
    _http: list[Any] = field(default_factory=list, repr=False)

    def _auth(self) -> tuple[Any, str, str]:
        if self._credentials is None:
            self._credentials = _credentials(self.settings)
        credentials, found_project = self._credentials
        project = self.settings.project or found_project
        if not project:
            raise LLMConfigurationError(
                "no Google Cloud project for Vertex AI: set GOOGLE_CLOUD_PROJECT, or project in [providers.vertex]"
            )
        try:  # the credentials' own project goes into the URL too
            checked_project(project)
        except ValueError as error:
            raise LLMConfigurationError(f"{error}; set project in [providers.vertex]") from None
        return credentials, project, self.settings.location or DEFAULT_LOCATION

    @property
    def gemini(self) -> genai.Client:
        """google-genai in Vertex mode (``client.aio`` serves async calls)."""
        if self._gemini is None:
            credentials, project, location = self._auth()
            http = async_client(httpx2, follow_redirects=True) if self.asynchronous else sync_client(httpx2)
            self._http.append(http)
            transport = {"httpx_async_client": http} if self.asynchronous else {"httpx_client": http}
            options = types.HttpOptions(
                base_url=self.settings.base_url,
                timeout=None if self.settings.timeout is None else max(int(self.settings.timeout * 1000), 1),
                retry_options=types.HttpRetryOptions(attempts=1),
                **transport,
            )
            self._gemini = genai.Client(
                vertexai=True, project=project, location=location, credentials=credentials, http_options=options
            )
        return self._gemini

    @property
    def anthropic(self) -> Any:
        """``AnthropicVertex`` (or its async twin): Claude's Messages API at ``:rawPredict``."""
        if self._anthropic is None:
            credentials, project, location = self._auth()
            options: dict[str, Any] = {"region": location, "project_id": project, "max_retries": 0}
            if self.settings.access_token is not None:
                options["access_token"] = self.settings.access_token.get_secret_value()
            else:
                options["credentials"] = credentials
            if self.settings.base_url is not None:  # the service's root: Claude's paths start at /v1
                options["base_url"] = self.settings.base_url.rstrip("/") + "/v1"
            if self.settings.timeout is not None:
                options["timeout"] = self.settings.timeout
            if self.asynchronous:
                self._anthropic = anthropic.AsyncAnthropicVertex(**options, http_client=sdk_async_client(anthropic))
            else:
                http = honour_deadline(anthropic.DefaultHttpxClient())
                self._anthropic = anthropic.AnthropicVertex(**options, http_client=http)
        return self._anthropic


def create_clients(settings: VertexSettings) -> VertexClients:
    """The sync clients (``ProviderInfo.create_client``); nothing is built or authenticated until a call."""
    return VertexClients(settings, asynchronous=False)


def create_async_clients(settings: VertexSettings) -> VertexClients:
    """The async clients of one event loop (``ProviderInfo.create_async_client``)."""
    return VertexClients(settings, asynchronous=True)


def close_clients(clients: VertexClients) -> Awaitable[None] | None:
    """Close whatever was built (``ProviderInfo.close_client``)."""
    if clients.asynchronous:
        return _aclose(clients)
    if clients._gemini is not None:
        clients._gemini.close()
    if clients._anthropic is not None:
        clients._anthropic.close()
    for http in clients._http:
        http.close()
    return None


async def _aclose(clients: VertexClients) -> None:
    closing = []
    if clients._gemini is not None:
        closing.append(clients._gemini.aio.aclose())
    if clients._anthropic is not None:
        closing.append(clients._anthropic.close())
    closing += [http.aclose() for http in clients._http]
    await asyncio.gather(*closing)
