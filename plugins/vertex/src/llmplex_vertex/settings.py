"""The settings of a Vertex AI provider instance, and which model family a model belongs to."""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import Field, SecretStr

from llmplex.provider import Capabilities, ProviderSettings

__all__ = ["DEFAULT_LOCATION", "Family", "VertexSettings", "family_of"]

DEFAULT_LOCATION = "us-central1"
"""The region used when neither the settings nor ``GOOGLE_CLOUD_LOCATION`` name one."""

Family = Literal["gemini", "anthropic"]


def family_of(model: str) -> Family:
    """``anthropic`` for Claude models (``claude-sonnet-4-5@20250929``), else ``gemini``."""
    return "anthropic" if model.removeprefix("publishers/anthropic/models/").startswith("claude") else "gemini"


class VertexSettings(ProviderSettings):
    """``[providers.vertex]``: project, location, credentials, endpoint, timeout and defaults.

    ``project`` comes from ``GOOGLE_CLOUD_PROJECT`` (else the credentials' own project) and ``location`` from
    ``GOOGLE_CLOUD_LOCATION`` (else ``us-central1``). Credentials are application default credentials
    (``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud auth application-default login``, the attached service
    account), or ``credentials_file`` (a service-account or authorized-user JSON file), or ``access_token``
    (an OAuth 2 token, e.g. ``gcloud auth print-access-token``).
    """

    env_vars = {
        "project": ("GOOGLE_CLOUD_PROJECT",),
        "location": ("GOOGLE_CLOUD_LOCATION",),
        "default_model": ("VERTEX_MODEL",),
    }

    project: str | None = Field(default=None, description="The Google Cloud project; unset: the credentials'.")
    location: str | None = Field(default=None, description="The region, e.g. us-central1, europe-west4, global.")
    credentials_file: str | None = Field(
        default=None, description="A service-account or authorized-user JSON file; unset: application defaults."
    )
    access_token: SecretStr | None = None
    base_url: str | None = Field(
        default=None,
        description="The Vertex AI service root (a private endpoint): https://REGION-aiplatform.googleapis.com.",
    )
    timeout: float | None = Field(default=None, gt=0, description="Seconds per call unless the deadline is sooner.")
    model: str | None = Field(default=None, description="When set, every request of this instance uses this model.")
    default_model: str | None = Field(
        default=None, description="The model of a request naming only the prefix ('vertex:'); unset: gemini-2.5-flash."
    )

    def preferred_model(self, declared: str | None) -> str | None:
        """``default_model`` (``VERTEX_MODEL``) when set, else the plugin's documented default."""
        return self.default_model or declared

    def model_capabilities(self, declared: Capabilities, model: str) -> Capabilities:
        """Claude models take the anthropic plugin's options and parts; Gemini models what the plugin declares."""
        capabilities = self.capabilities(declared)
        if family_of(self.model or model) == "anthropic":
            from llmplex_vertex.families import CLAUDE_ON_VERTEX

            return dataclasses.replace(capabilities, **CLAUDE_ON_VERTEX)
        return capabilities
