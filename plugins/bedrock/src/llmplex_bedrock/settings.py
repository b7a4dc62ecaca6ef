"""The settings of a Bedrock provider instance."""

from __future__ import annotations

from pydantic import Field, SecretStr

from llmplex.provider import ProviderSettings

__all__ = ["BedrockSettings"]


class BedrockSettings(ProviderSettings):
    """``[providers.bedrock]``: region, endpoint, optional explicit credentials, timeout and defaults.

    Without explicit credentials boto3's credential chain finds them (``AWS_ACCESS_KEY_ID``/
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, SSO, the shared files, container and instance
    roles), and ``region`` defaults to the chain's (``AWS_REGION``, ``AWS_DEFAULT_REGION``, the
    profile). Explicit keys are ``SecretStr`` and never shown.
    """

    env_vars = {"default_model": ("BEDROCK_MODEL",)}

    region: str | None = Field(default=None, description="AWS region, e.g. us-east-1; unset: the AWS chain's.")
    endpoint_url: str | None = Field(default=None, description="Another Bedrock runtime endpoint (VPC, proxy, test).")
    profile: str | None = Field(default=None, description="A named profile of the AWS shared config files.")
    aws_access_key_id: SecretStr | None = None
    aws_secret_access_key: SecretStr | None = None
    aws_session_token: SecretStr | None = None
    timeout: float | None = Field(default=None, gt=0, description="Seconds per call unless the deadline is sooner.")
    model: str | None = Field(default=None, description="When set, every request of this instance uses this model.")
    default_model: str | None = Field(
        default=None, description="The model of a request naming only the prefix ('bedrock:')."
    )

    def preferred_model(self, declared: str | None) -> str | None:
        """``default_model`` (``BEDROCK_MODEL``) when set, else the plugin's documented default."""
        return self.default_model or declared

    def problems(self) -> list[str]:
        """Half of an explicit key pair; the credential chain itself is only consulted when a call is made."""
        if (self.aws_access_key_id is None) != (self.aws_secret_access_key is None):
            return ["set both aws_access_key_id and aws_secret_access_key, or neither (the AWS credential chain)"]
        return []
