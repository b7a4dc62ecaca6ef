"""Settings of the ``claude-code`` provider."""

from __future__ import annotations

import shutil

from pydantic import Field, SecretStr

from llmplex.provider import ProviderSettings

__all__ = ["INSTALL_HINT", "ClaudeCodeSettings"]

INSTALL_HINT = (
    "install it with `npm install -g @anthropic-ai/claude-code`, or set cli_path (the claude executable) "
    "in the claude-code provider's config table or CLAUDE_CODE_CLI_PATH"
)


class ClaudeCodeSettings(ProviderSettings):
    """Where the ``claude`` CLI is and how to run it.

    The CLI uses its own login (``claude`` then ``/login``) unless ``api_key`` (or
    ``ANTHROPIC_API_KEY``) is set. Claude Code's own tools are off unless listed
    in ``tools`` (e.g. ``["Read", "Grep"]``): a provider answers, it does not act.
    The CLI gets a scrubbed environment; ``pass_env`` adds variables to it.
    """

    env_vars = {"cli_path": ("CLAUDE_CODE_CLI_PATH",), "api_key": ("ANTHROPIC_API_KEY",)}

    cli_path: str | None = Field(default=None, description="The claude executable; default: `claude` on PATH.")
    api_key: SecretStr | None = None
    tools: tuple[str, ...] = Field(default=(), description="Claude Code tools to allow (default: none).")
    cwd: str | None = Field(default=None, description="Working directory of the CLI (default: the current one).")
    extra_args: tuple[str, ...] = Field(default=(), description="More CLI arguments, e.g. ['--effort', 'low'].")
    pass_env: tuple[str, ...] = Field(
        default=(),
        description="More environment variables for the CLI: names or patterns, e.g. ['AWS_*'] for Bedrock.",
    )

    def resolved_cli(self) -> str | None:
        """The path of the executable to run, or ``None`` when it cannot be found."""
        return shutil.which(self.cli_path or "claude")

    def problems(self) -> list[str]:
        """The CLI must be found; login state is only known when a request runs."""
        if self.resolved_cli() is None:
            return [f"claude CLI not found ({self.cli_path or 'claude'} is not on PATH): {INSTALL_HINT}"]
        return []
