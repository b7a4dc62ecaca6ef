"""Settings of one provider instance of the OpenAI plugin (``openai:`` or a config instance)."""

from __future__ import annotations

import dataclasses
import ipaddress
from functools import cached_property
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr

from llmplex.provider import Capabilities, ProviderSettings
from llmplex.types import LLMConfig

__all__ = ["OPENAI_BASE_URL", "RESPONSES_REFUSED_OPTIONS", "Api", "OpenAISettings", "is_local_url"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
_OPENAI_HOST = "api.openai.com"
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

Api = Literal["responses", "chat"]

RESPONSES_REFUSED_OPTIONS = ("seed", "stop", "presence_penalty", "frequency_penalty")
"""Sampling options the Responses API does not take (Chat Completions does)."""
_RESPONSES_NOTE = 'the OpenAI Responses API does not accept it: use the Chat Completions API (api = "chat")'


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine (loopback or unspecified address, ``localhost``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


class OpenAISettings(ProviderSettings):
    """How to reach OpenAI or an OpenAI-compatible server.

    Attributes:
        api_key: the API key; for ``openai:`` it defaults to ``OPENAI_API_KEY``.
            A keyless local server needs none.
        base_url: the API root (default ``https://api.openai.com/v1``).
        organization: the ``OpenAI-Organization`` header (``OPENAI_ORG_ID``).
        project: the ``OpenAI-Project`` header (``OPENAI_PROJECT_ID``).
        timeout: upper bound of one HTTP request in seconds (the call's deadline may shorten it).
        api: ``"responses"`` or ``"chat"`` (Chat Completions). Unset, it is
            ``"responses"`` for OpenAI itself and ``"chat"`` for any other ``base_url``.
        batch_max_requests: requests per batch of ``--provider-batch`` (OpenAI: 50,000).
        batch_max_bytes: bytes per batch input file (OpenAI: 200 MB).
    """

    env_vars = {
        "api_key": ("OPENAI_API_KEY",),
        "base_url": ("OPENAI_BASE_URL",),
        "organization": ("OPENAI_ORG_ID",),
        "project": ("OPENAI_PROJECT_ID",),
    }

    api_key: SecretStr | None = None
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    organization: str | None = None
    project: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    api: Api | None = None
    batch_max_requests: int = Field(default=50_000, gt=0)
    batch_max_bytes: int = Field(default=200_000_000, gt=0)

    @property
    def url(self) -> str:
        """The API root requests go to."""
        return self.base_url or OPENAI_BASE_URL

    @cached_property
    def is_openai(self) -> bool:
        """Whether requests go to OpenAI's own API."""
        return (urlsplit(self.url).hostname or "").lower() == _OPENAI_HOST

    @cached_property
    def effective_api(self) -> Api:
        """The API this instance speaks: ``api`` if set, else chosen from ``base_url``."""
        if self.api is not None:
            return self.api
        return "responses" if self.is_openai else "chat"

    def capabilities(self, declared: Capabilities) -> Capabilities:
        """Chat Completions stores no responses (no response chains, nothing to delete) and has no reasoning
        items; the Responses API takes no audio, and not the options ``RESPONSES_REFUSED_OPTIONS`` names."""
        if self.effective_api == "chat":
            return dataclasses.replace(
                declared, response_chains=False, delete_response=False, reasoning_formats=frozenset()
            )
        options = frozenset(LLMConfig.model_fields) - frozenset(RESPONSES_REFUSED_OPTIONS)
        return dataclasses.replace(
            declared,
            input_parts=declared.input_parts - {"audio"},
            sampling_options=options,
            options_note=_RESPONSES_NOTE,
        )

    def problems(self) -> list[str]:
        """A missing key is a problem unless the server is on this machine."""
        if self.api_key is None and not is_local_url(self.url):
            return [f"no API key for {self.url}: set OPENAI_API_KEY (openai:) or api_key in its [providers.*] table"]
        return []
