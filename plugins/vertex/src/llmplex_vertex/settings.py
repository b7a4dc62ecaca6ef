"""The settings of a Vertex AI provider instance, and which model family a model belongs to."""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from llmplex.provider import Capabilities, ProviderSettings

__all__ = ["DEFAULT_LOCATION", "Family", "VertexSettings", "checked_project", "family_of"]

DEFAULT_LOCATION = "us-central1"
"""The region used when neither the settings nor ``GOOGLE_CLOUD_LOCATION`` name one."""

Family = Literal["gemini", "anthropic"]

_LOCATION = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A region or multi-region as Google names them: ``us-central1``, ``europe-west4``, ``global``, ``us``."""
_PROJECT = re.compile(r"(?:[a-z0-9][a-z0-9.-]*[a-z0-9]:)?[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?")
"""A project id (``my-project``), number (``123456789``) or domain-scoped id (``example.com:my-project``)."""


def checked_project(project: str) -> str:
    """``project`` when it is a Google Cloud project id or number (it goes into the URL's path); else
    ``ValueError`` (``..``, ``/``, ``?``, ``#``, ``@``, whitespace would steer the URL)."""
    if not _PROJECT.fullmatch(project) or ".." in project:
        raise ValueError(
            f"project {project!r} is not a Google Cloud project id (letters, digits and '-', such as my-project, "
            "or a project number); it goes into the request's URL, so nothing else is taken"
        )
    return project


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

    @field_validator("project")
    @classmethod
    def _project_id(cls, project: str | None) -> str | None:
        return None if project is None else checked_project(project)

    @field_validator("location")
    @classmethod
    def _region_name(cls, location: str | None) -> str | None:
        if location is not None and not _LOCATION.fullmatch(location):
            raise ValueError(
                f"location {location!r} is not a Google Cloud region (such as us-central1, europe-west4 or "
                "global); it goes into the request's host and path, so nothing else is taken"
            )
        return location

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
