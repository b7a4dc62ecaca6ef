"""The validated shape of llmplex configuration."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_serializer, field_validator, model_validator
from pydantic_core import PydanticCustomError

from llmplex.config.groups import GroupConfig, group_problems
from llmplex.config.mcp import MCPConfig
from llmplex.config.wording import KEY_ERROR
from llmplex.masking.secret_url import SecretURL
from llmplex.masking.values import is_secret_name, url_credentials

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_MODEL",
    "DROP_KEY",
    "LIMIT_KEYS",
    "BudgetConfig",
    "CacheConfig",
    "Config",
    "GatewayConfig",
    "LimitsConfig",
    "LogConfig",
    "ThrottleConfig",
    "ThrottleOverride",
    "reveal_secrets",
]

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"
"""The model a call uses when it names none: the local, instruction-tuned default of llmplex-llamacpp."""

DEFAULT_EMBEDDING_MODEL = "llamacpp:all-minilm-l6-v2"
"""The model ``embed`` uses when it names none: llmplex-llamacpp's local embedding model, no API key."""

LIMIT_KEYS = ("rate_limit", "token_rate_limit", "max_concurrency")
"""Keys of a ``[providers.<prefix>]`` table that core reads (shared limits), never passed to the plugin."""

DROP_KEY = "drop_unsupported"
"""Key of a ``[providers.<prefix>]`` table (and of the top level) that core reads: drop what the instance
cannot honour instead of refusing the request; never passed to the plugin."""


def _hide_secrets(table: dict[str, Any]) -> dict[str, Any]:
    """``table`` with every string under a secret name (``api_key``, ``aws_secret_access_key``), or that is a URL
    carrying credentials (``?key=...``, ``user:pass@``), as a ``SecretStr``."""
    return {
        key: SecretStr(value)
        if isinstance(value, str) and (is_secret_name(key) or url_credentials(value))
        else _hide_secrets(value)
        if isinstance(value, dict)
        else value
        for key, value in table.items()
    }


def reveal_secrets(table: dict[str, Any]) -> dict[str, Any]:
    """A provider table as its plugin's settings model reads it: plain strings again."""
    return {
        key: value.get_secret_value()
        if isinstance(value, SecretStr)
        else reveal_secrets(value)
        if isinstance(value, dict)
        else value
        for key, value in table.items()
    }


class ThrottleOverride(BaseModel):
    """``[throttle.providers.<prefix>]``: the retry settings one provider instance changes."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_attempts: int | None = Field(default=None, ge=1)
    base_delay: float | None = Field(default=None, ge=0)
    max_delay: float | None = Field(default=None, ge=0)
    max_total_delay: float | None = Field(default=None, ge=0)


class ThrottleConfig(BaseModel):
    """Retry policy for retryable failures (429, 5xx, timeouts, connection errors).

    ``providers`` changes it for one provider instance, keyed by prefix
    (``[throttle.providers.openai] max_attempts = 3``); it lives here rather than
    in ``[providers.<prefix>]`` because those tables belong to the plugins.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_attempts: int = Field(default=5, ge=1, description="Attempts per model, the first included.")
    base_delay: float = Field(default=0.5, ge=0, description="Seconds; doubles each retry before jitter.")
    max_delay: float = Field(default=8.0, ge=0, description="Upper bound of one wait, in seconds.")
    max_total_delay: float = Field(default=30.0, ge=0, description="Upper bound of all waits together.")
    providers: dict[str, ThrottleOverride] = Field(default_factory=dict)


class BudgetConfig(BaseModel):
    """``[budget]``: caps shared by every call of a Client (``None``: no cap)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_input_tokens: int | None = Field(default=None, ge=0)
    max_output_tokens: int | None = Field(default=None, ge=0)
    max_total_tokens: int | None = Field(default=None, ge=0)
    max_requests: int | None = Field(default=None, ge=0)
    max_cost_usd: Decimal | None = Field(default=None, ge=0)
    unpriced_input_usd_per_mtok: Decimal | None = Field(
        default=None,
        ge=0,
        description="Under max_cost_usd: US dollars per million input tokens of a model "
        "genai-prices cannot price (without it such a model is refused before sending).",
    )
    unpriced_output_usd_per_mtok: Decimal | None = Field(
        default=None, ge=0, description="Under max_cost_usd: US dollars per million output tokens of such a model."
    )
    name: str = Field(
        default="default",
        min_length=1,
        description="Key of the budget in a shared [limits] storage: processes using the same name share it.",
    )


class LimitsConfig(BaseModel):
    """``[limits]``: where rate-limit windows and shared budgets are kept.

    ``memory://`` (the default) keeps them in this process; ``redis://host:port/db``
    shares them with every process and host using the same storage.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    storage: SecretURL = Field(
        default=SecretURL("memory://"),
        description="A limits storage URL: memory:// or redis://host:port/db (its password never shows).",
    )
    on_storage_error: Literal["raise", "local"] = Field(
        default="raise", description="raise: a call fails when the storage is unreachable; local: warn, per process."
    )

    @field_validator("storage")
    @classmethod
    def _known_scheme(cls, storage: SecretURL) -> SecretURL:
        url = storage.get_secret_value()
        scheme = url.partition("://")[0]
        if not url.partition("://")[1] or scheme not in ("memory", "redis", "rediss"):
            raise ValueError('expected a storage URL such as "memory://" or "redis://127.0.0.1:6379/0"')
        return storage

    @field_serializer("storage", when_used="json")
    def _masked_storage(self, storage: SecretURL) -> str:
        """JSON dumps show the URL with its password masked (a Python dump keeps the ``SecretURL``)."""
        return str(storage)


class CacheConfig(BaseModel):
    """``[cache]``: the opt-in response cache of complete answers (see ``llmplex.cache``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    backend: Literal["disk", "memory"] = Field(
        default="disk", description="disk: diskcache files shared by processes (llmplex[cache]); memory: this client."
    )
    ttl: float | None = Field(default=None, gt=0, description="Seconds an answer stays fresh; None keeps it.")
    directory: str | None = Field(
        default=None, description="Where the disk backend writes; default $LLMPLEX_CACHE_DIR/responses."
    )


class LogConfig(BaseModel):
    """``[log]``: the call log (``llmplex.store``): every call's prompt, answer, usage and cost in a database."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    enabled: bool | None = Field(
        default=None, description="Log calls; None: the CLI logs (unless `llmplex logs off`), the library does not."
    )
    database: SecretURL | None = Field(
        default=None,
        description="sqlite:///PATH or postgresql://...; None: logs.db in the user data directory.",
    )
    bodies: bool = Field(default=True, description="false: keep only the figures, no prompt, answer or options.")

    @field_validator("database")
    @classmethod
    def _known_database(cls, database: SecretURL | None) -> SecretURL | None:
        if database is None:
            return None
        url = database.get_secret_value()
        scheme = url.partition("://")[0].partition("+")[0]
        if not url.partition("://")[1] or scheme not in ("sqlite", "postgresql", "postgres"):
            raise ValueError('expected a database URL such as "sqlite:////home/me/logs.db" or "postgresql://host/db"')
        return database

    @field_serializer("database", when_used="json")
    def _masked_database(self, database: SecretURL | None) -> str | None:
        """JSON dumps show the URL with its password masked (a Python dump keeps the ``SecretURL``)."""
        return None if database is None else str(database)


class GatewayConfig(BaseModel):
    """``[gateway]``: the HTTP server of ``llmplex serve`` (``llmplex[gateway]``); its master key is never here."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    host: str = Field(default="127.0.0.1", min_length=1, description="The address to listen on.")
    port: int = Field(default=4000, ge=0, le=65535, description="The TCP port (0: any free port).")
    workers: int = Field(default=1, ge=1, le=512, description="Worker processes sharing the port.")
    models: tuple[str, ...] = Field(
        default=(), description="Models GET /v1/models lists besides the aliases (any llmplex model string)."
    )
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024, description="Largest request body accepted.")
    keepalive_seconds: float = Field(default=15.0, gt=0, description="Seconds of stream silence before a comment.")
    shutdown_timeout: float = Field(default=30.0, ge=0, description="Seconds in-flight requests get to finish.")
    tls_certfile: str | None = Field(default=None, description="PEM certificate chain: serve HTTPS.")
    tls_keyfile: str | None = Field(default=None, description="PEM private key of tls_certfile.")
    database: SecretURL | None = Field(
        default=None,
        description="Keys and spend: sqlite:///PATH or postgresql://...; None: the [log] database (logs.db).",
    )
    log_bodies: bool = Field(default=False, description="Keep prompts and answers in the spend log (off: figures).")
    drop_hints: bool = Field(
        default=True,
        description="Leave out what only changes cost or speed (cache marks, service_tier, metadata...) where the "
        "provider cannot take it, named in x-llmplex-dropped; false: refuse it unless drop_unsupported.",
    )
    key_cache_seconds: float = Field(
        default=1.0, ge=0, le=3600, description="Seconds a key lookup is reused (a revocation takes this long)."
    )
    max_header_bytes: int = Field(
        default=64 * 1024, ge=1024, description="Largest request head (URL and headers) accepted; more: 431."
    )
    max_header_count: int = Field(default=100, ge=8, description="Most headers a request may carry; more: 431.")
    header_timeout: float = Field(
        default=10.0, gt=0, description="Seconds a request's head may take to arrive; later: 408, connection closed."
    )
    max_connections: int = Field(
        default=1000, ge=1, description="Open connections per worker; one more gets 503 with Retry-After."
    )
    max_in_flight_per_key: int = Field(
        default=256, ge=1, description="Requests one key may have in flight per worker; one more gets 429."
    )
    auth_failures: int = Field(
        default=10, ge=1, description="Failed authentications an address may make per window before 429s."
    )
    auth_failure_window: int = Field(
        default=60, ge=1, description="Seconds of the window auth_failures counts in (shared via [limits])."
    )

    @field_validator("database")
    @classmethod
    def _known_database(cls, database: SecretURL | None) -> SecretURL | None:
        return LogConfig._known_database(database)

    @field_serializer("database", when_used="json")
    def _masked_database(self, database: SecretURL | None) -> str | None:
        """JSON dumps show the URL with its password masked (a Python dump keeps the ``SecretURL``)."""
        return None if database is None else str(database)

    @model_validator(mode="after")
    def _tls_pair(self) -> GatewayConfig:
        if (self.tls_certfile is None) != (self.tls_keyfile is None):
            raise _key_error(("gateway", "tls_keyfile"), "expected tls_certfile and tls_keyfile together", None)
        return self


class Config(BaseModel):
    """Everything llmplex reads from files, environment and keyword arguments.

    ``providers`` maps a prefix to its settings; a table with ``plugin = "openai"``
    declares a new instance of that plugin under its own prefix. Strings under a
    secret name (``is_secret_name``: ``api_key``,
    ``token``, ...), and URLs carrying credentials, are kept as ``SecretStr``, so
    that no repr or dump of the config shows them; ``reveal_secrets`` hands
    them to the plugin's settings, which register them for masking.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    default_model: str = DEFAULT_MODEL
    default_embedding_model: str = DEFAULT_EMBEDDING_MODEL
    default_provider: str | None = None
    enabled: tuple[str, ...] | None = Field(default=None, description="Allow-list of prefixes; None allows all.")
    disabled: tuple[str, ...] = ()
    aliases: dict[str, str] = Field(default_factory=dict)
    fallbacks: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="Model -> models tried in order once its retries are exhausted on a retryable error.",
    )
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    groups: dict[str, GroupConfig] = Field(
        default_factory=dict, description="Group name -> its deployments: one model name over several endpoints."
    )
    throttle: ThrottleConfig = ThrottleConfig()
    budget: BudgetConfig | None = None
    limits: LimitsConfig = LimitsConfig()
    cache: CacheConfig | None = None
    log: LogConfig = LogConfig()
    gateway: GatewayConfig = GatewayConfig()
    mcp: MCPConfig = MCPConfig()
    timeout: float | None = Field(default=None, gt=0, description="Default per-request deadline in seconds.")
    prompt_cache: Literal["auto"] | None = Field(
        default=None, description='"auto": providers place prompt-cache breakpoints on the stable prefix.'
    )
    drop_unsupported: bool = Field(
        default=False,
        description="Drop options, parts and modes a provider instance cannot honour (listed in Response.dropped) "
        "instead of refusing the request.",
    )

    @field_validator("providers")
    @classmethod
    def _hide_provider_secrets(cls, providers: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {name: _hide_secrets(table) for name, table in providers.items()}

    @model_validator(mode="after")
    def _check_tables(self) -> Config:
        for name, table in self.providers.items():
            plugin = table.get("plugin", name)
            if not isinstance(plugin, str) or not plugin:
                raise _key_error(("providers", name, "plugin"), 'expected a plugin name such as "openai"', plugin)
            _check_limits(name, table)
            if DROP_KEY in table and not isinstance(table[DROP_KEY], bool):
                raise _key_error(("providers", name, DROP_KEY), "expected true or false", table[DROP_KEY])
        for model, chain in self.fallbacks.items():
            if not all(m.strip() for m in chain):
                raise _key_error(("fallbacks", model), 'expected model names like "anthropic:claude-sonnet-4-5"', chain)
            if model in chain:
                raise _key_error(("fallbacks", model), "the model lists itself as its own fallback", chain)
        for key, message in group_problems(self.groups, self.aliases):
            raise _key_error(key, message, [d.model for d in self.groups[key[1]].deployments])
        return self

    def is_enabled(self, prefix: str) -> str | None:
        """``None`` when ``prefix`` may be used, else the reason it may not (its plugin's being disabled too)."""
        if prefix in self.disabled:
            return f"provider {prefix!r} is disabled (listed in 'disabled' / LLMPLEX_DISABLED)"
        if self.enabled is not None and prefix not in self.enabled:
            return (
                f"provider {prefix!r} is not in the 'enabled' allow-list / LLMPLEX_ENABLED ({', '.join(self.enabled)})"
            )
        plugin = self.plugin_of(prefix)
        if plugin != prefix and plugin in self.disabled:
            return f"provider {prefix!r} uses plugin {plugin!r}, which is disabled"
        return None

    def drops_unsupported(self, prefix: str) -> bool:
        """Whether provider instance ``prefix`` drops what it cannot honour: its table's ``drop_unsupported``,
        else the top-level one."""
        return bool(self.providers.get(prefix, {}).get(DROP_KEY, self.drop_unsupported))

    def plugin_of(self, prefix: str) -> str:
        """The plugin (entry-point name) that serves ``prefix``."""
        return str(self.providers.get(prefix, {}).get("plugin", prefix))


def _check_limits(prefix: str, table: dict[str, Any]) -> None:
    """The shared-limit keys of one provider table: rate strings in the ``limits`` syntax, a positive count."""
    for key in ("rate_limit", "token_rate_limit"):
        value = table.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not _parses(value):
            raise _key_error(
                ("providers", prefix, key),
                'expected a rate such as "500/minute" or "10/second;500/minute" (the limits library\'s syntax)',
                value,
            )
    value = table.get("max_concurrency")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise _key_error(("providers", prefix, "max_concurrency"), "expected a whole number >= 1", value)


def _parses(rate: str) -> bool:
    from limits import parse_many  # imported only by a config that sets a rate

    try:
        return bool(parse_many(rate))
    except ValueError:
        return False


def _key_error(key: tuple[str, ...], message: str, found: object) -> PydanticCustomError:
    """A validator's problem with one key, worded by the loader like pydantic's own."""
    return PydanticCustomError(KEY_ERROR, message, {"message": message, "key": key, "found": found})
