"""What a provider plugin declares about itself when it registers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SecretStr

from llmplex.masking.values import is_secret_name, redact, register_secret, register_url_secrets

__all__ = ["Capabilities", "ProviderInfo", "ProviderSettings"]


class ProviderSettings(BaseModel):
    """Base of every provider's settings model.

    Subclasses add their fields (``api_key: SecretStr | None``, ``base_url``, ...)
    and name, in ``env_vars``, the environment variables that fill a field the
    config leaves unset. Environment defaults apply to the provider's own prefix,
    not to extra instances declared in config, so a local server never receives
    a cloud key by accident.

    Its ``repr`` masks secrets, credentials inside URLs included.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    env_vars: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, redact(value)

    def register_secrets(self) -> None:
        """Register every secret these settings hold for masking: ``SecretStr`` values, credentials in URLs,
        strings under secret names in nested tables (``completion_kwargs``)."""
        _register_values(self.__dict__.values())

    def problems(self) -> list[str]:
        """What is missing before the provider can work (e.g. no API key); empty when ready."""
        return []

    def preferred_model(self, declared: str | None) -> str | None:
        """The model a request naming only the prefix (``"gemini:"``) uses: the plugin's declared
        default unless a setting of this instance (an environment variable) chooses another."""
        return declared

    def capabilities(self, declared: Capabilities) -> Capabilities:
        """This instance's capabilities: the plugin's declared ones, narrowed by settings when they
        depend on them (an OpenAI-compatible Chat Completions server has no stored responses)."""
        return declared

    def model_capabilities(self, declared: Capabilities, model: str) -> Capabilities:
        """What this instance can do for ``model``: ``capabilities(declared)`` unless the plugin serves model
        families that differ (Vertex AI's Gemini and Claude models); core holds each request to it."""
        return self.capabilities(declared)


@dataclass(frozen=True)
class Capabilities:
    """What a provider can do; core adapts its strategy to these flags.

    ``sampling_options`` names the ``LLMConfig`` options the provider takes
    (``None``: all of them), so that code adapting other APIs can leave out the
    ones it cannot take instead of failing. ``embeddings`` says the provider
    implements ``llmplex_embed``; it takes at most ``embedding_batch_size``
    texts per request, and a ``dimensions`` option when ``embedding_dimensions``.

    ``input_parts`` names the content parts a user message may carry to this
    provider, of ``"image"``, ``"document"`` and ``"audio"`` (empty: text only);
    core refuses a request with any other part before it is formatted.

    ``prompt_cache`` says the provider honours ``cache=True`` marks on
    messages, tools and parts (explicit breakpoints, or automatic prefix
    caching); ``reasoning_formats`` names the ``ReasoningPart.format`` values
    it replays (reasoning of any other format is dropped, with an event).
    Whatever a request asks that these flags refuse is an
    ``LLMConfigurationError`` before anything is sent, or dropped and listed
    in ``Response.dropped`` with ``drop_unsupported = true``; ``options_note``
    says why options outside ``sampling_options`` are refused and what to do.
    """

    streaming: bool = True
    tools: bool = False
    native_structured_output: bool = False
    response_chains: bool = False
    delete_response: bool = False
    sampling_options: frozenset[str] | None = None
    embeddings: bool = False
    embedding_dimensions: bool = False
    embedding_batch_size: int = 100
    input_parts: frozenset[str] = frozenset()
    prompt_cache: bool = False
    reasoning_formats: frozenset[str] = frozenset()
    options_note: str = ""


@dataclass(frozen=True)
class ProviderInfo:
    """A provider as a plugin registers it.

    Attributes:
        name: the prefix it serves (``"openai"`` for ``openai:gpt-4o``).
        settings_model: validates the provider's settings from config and env.
        capabilities: what the provider supports.
        model_aliases: short model names mapped to the provider's real names.
        default_model: the model used when a request names only the prefix.
        default_embedding_model: the model ``embed`` uses when given only the prefix.
        create_client: builds the SDK client once per provider instance (sync).
        create_async_client: the async client, built once per event loop. Without it, async hooks get
            ``create_client``'s client, unless that is a sync httpx client: core then raises
            ``LLMConfigurationError`` rather than let its blocking I/O stall the event loop.
        close_client: closes a client built by either factory (``Client.close()``/``aclose()``, and an
            event loop's shutdown for async clients); may return an awaitable for async clients.
            Default: the client's ``aclose()`` (async clients) or ``close()``.
        description: one line for ``llmplex providers``.
    """

    name: str
    settings_model: type[ProviderSettings] = ProviderSettings
    capabilities: Capabilities = field(default_factory=Capabilities)
    model_aliases: Mapping[str, str] = field(default_factory=dict)
    default_model: str | None = None
    default_embedding_model: str | None = None
    create_client: Callable[[Any], Any] | None = None
    create_async_client: Callable[[Any], Any] | None = None
    close_client: Callable[[Any], Awaitable[None] | None] | None = None
    description: str = ""


def _register_values(values: Iterable[Any]) -> None:
    for value in values:
        if isinstance(value, SecretStr):
            register_secret(value.get_secret_value())
        elif isinstance(value, str):
            register_url_secrets(value)
        elif isinstance(value, Mapping):
            for name, item in value.items():
                if isinstance(item, str) and is_secret_name(str(name)):
                    register_secret(item)
            _register_values(value.values())
        elif isinstance(value, (list, tuple)):
            _register_values(value)
