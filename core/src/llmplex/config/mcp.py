"""``[mcp.servers.NAME]``: MCP servers whose tools calls may use (``llmplex.MCPServer``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from llmplex.masking.values import redact

__all__ = ["MCPConfig", "MCPServerConfig"]


class MCPServerConfig(BaseModel):
    """One MCP server: a command to start (stdio) or a URL to reach (streamable HTTP, or the older SSE).

    Every ``env`` and ``headers`` value is a ``SecretStr``: none is shown in a
    repr, a log, an event or an error.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    command: str | None = Field(default=None, min_length=1, description="The program that runs the server (stdio).")
    args: tuple[str, ...] = ()
    env: dict[str, SecretStr] = Field(default_factory=dict, description="Extra environment of the server's process.")
    cwd: str | None = None
    url: str | None = Field(default=None, description="The server's endpoint (http:// or https://).")
    headers: dict[str, SecretStr] = Field(default_factory=dict, description="HTTP headers sent with every request.")
    transport: Literal["stdio", "http", "sse"] | None = Field(
        default=None, description="stdio with command; http (streamable HTTP, the default) or sse with url."
    )
    startup_timeout: float = Field(
        default=30.0, gt=0, description="Seconds the server may take to start and list its tools."
    )

    @model_validator(mode="after")
    def _one_way_in(self) -> MCPServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a server started as a process) or url (a running server)")
        if self.command is not None:
            if self.transport not in (None, "stdio"):
                raise ValueError(f"transport {self.transport!r} needs url, not command")
            if self.headers:
                raise ValueError("headers go with url; a command server takes env")
            return self
        assert self.url is not None
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {redact(self.url)!r}")
        if self.transport == "stdio" or self.args or self.env or self.cwd:
            raise ValueError("args, env, cwd and transport='stdio' go with command, not url")
        return self

    @property
    def kind(self) -> Literal["stdio", "http", "sse"]:
        """How llmplex reaches the server: ``stdio`` (a command), else ``transport`` or ``http``."""
        return "stdio" if self.command is not None else self.transport or "http"

    def revealed_env(self) -> dict[str, str]:
        """``env`` as plain strings, for the process."""
        return {key: value.get_secret_value() for key, value in self.env.items()}

    def revealed_headers(self) -> dict[str, str]:
        """``headers`` as plain strings, for the HTTP client."""
        return {key: value.get_secret_value() for key, value in self.headers.items()}


class MCPConfig(BaseModel):
    """``[mcp]``: ``servers`` maps a name to its ``[mcp.servers.NAME]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[str, MCPServerConfig] = Field(default_factory=dict)
