"""llmplex: one Python interface to every LLM provider.

``import llmplex`` is cheap: names below are loaded on first use.

    import llmplex
    r = llmplex.complete("openai:gpt-4o-mini", "Say hi")
    print(r.text, r.usage.total_tokens)
"""

from __future__ import annotations

import math
import time

from llmplex import process_client

TYPE_CHECKING = False
"""Not ``typing.TYPE_CHECKING``: importing ``typing`` (with ``re``, ``functools``...) would cost more than the rest
of ``import llmplex``; type checkers read any ``TYPE_CHECKING`` as true."""
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Sequence
    from typing import Any, Unpack

    from llmplex.batching import (
        abatch,
        batch,
    )
    from llmplex.client import (
        Client,
    )
    from llmplex.config.schema import (
        Config,
        ThrottleConfig,
    )
    from llmplex.engine.call_args import (
        CallArgs,
    )
    from llmplex.engine.request_builder import (
        PromptInput,
        ToolInput,
    )
    from llmplex.errors import (
        LLMAPIError,
        LLMAuthenticationError,
        LLMBadRequestError,
        LLMBudgetExceededError,
        LLMConfigurationError,
        LLMConnectionError,
        LLMDeadlineExceededError,
        LLMError,
        LLMGroupUnavailableError,
        LLMIncompleteError,
        LLMOutputParseError,
        LLMQuotaExhaustedError,
        LLMRateLimitError,
        LLMRefusalError,
        LLMServerError,
        LLMSubprocessError,
        LLMTimeoutError,
        LLMToolLoopError,
        LLMToolSourceError,
        LLMUsageError,
    )
    from llmplex.events import (
        DeploymentCooled,
        DeploymentFailed,
        Event,
        FallbackUsed,
        Hedged,
        PromptExecuted,
        PromptRendered,
        RequestFailed,
        RequestStarted,
        Throttled,
        ToolInvoked,
        UsageUnknown,
    )
    from llmplex.facade import (
        LLMClient,
        LLMRequest,
    )
    from llmplex.hookspecs import (
        hookimpl,
    )
    from llmplex.mcp import (
        MCPServer,
    )
    from llmplex.provider import (
        Capabilities,
        ProviderInfo,
        ProviderSettings,
    )
    from llmplex.reliability.budget import (
        Budget,
        BudgetSnapshot,
        BudgetTracker,
    )
    from llmplex.reliability.clock import (
        Clock,
    )
    from llmplex.reliability.deadline import (
        Deadline,
    )
    from llmplex.reliability.shared_budget import (
        SharedBudgetTracker,
    )
    from llmplex.reliability.storage import (
        LimitsStorageWarning,
    )
    from llmplex.reliability.throttle import (
        ThrottlePolicy,
    )
    from llmplex.tooling import (
        ToolContext,
    )
    from llmplex.types import (
        Audio,
        Document,
        Embeddings,
        Image,
        LLMConfig,
        Message,
        ModelInfo,
        OutputSchema,
        Request,
        Response,
        StreamEvent,
        Tool,
        ToolCall,
        Usage,
    )
    from llmplex.types.tool_result import (
        ToolResult,
    )

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "Client": "llmplex.client",
    "Config": "llmplex.config.schema",
    "ThrottleConfig": "llmplex.config.schema",
    "CallArgs": "llmplex.engine.call_args",
    "hookimpl": "llmplex.hookspecs",
    "Capabilities": "llmplex.provider",
    "ProviderInfo": "llmplex.provider",
    "ProviderSettings": "llmplex.provider",
    "Budget": "llmplex.reliability.budget",
    "BudgetSnapshot": "llmplex.reliability.budget",
    "BudgetTracker": "llmplex.reliability.budget",
    "SharedBudgetTracker": "llmplex.reliability.shared_budget",
    "LimitsStorageWarning": "llmplex.reliability.storage",
    "Clock": "llmplex.reliability.clock",
    "Deadline": "llmplex.reliability.deadline",
    "ThrottlePolicy": "llmplex.reliability.throttle",
    "abatch": "llmplex.batching",
    "batch": "llmplex.batching",
    "LLMClient": "llmplex.facade",
    "LLMRequest": "llmplex.facade",
    "ToolContext": "llmplex.tooling",
    "MCPServer": "llmplex.mcp",
    "ToolResult": "llmplex.types.tool_result",
    **dict.fromkeys(
        [
            "LLMAPIError",
            "LLMAuthenticationError",
            "LLMBadRequestError",
            "LLMBudgetExceededError",
            "LLMConfigurationError",
            "LLMConnectionError",
            "LLMDeadlineExceededError",
            "LLMError",
            "LLMGroupUnavailableError",
            "LLMIncompleteError",
            "LLMOutputParseError",
            "LLMQuotaExhaustedError",
            "LLMRateLimitError",
            "LLMRefusalError",
            "LLMServerError",
            "LLMSubprocessError",
            "LLMTimeoutError",
            "LLMToolLoopError",
            "LLMToolSourceError",
            "LLMUsageError",
        ],
        "llmplex.errors",
    ),
    **dict.fromkeys(
        [
            "DeploymentCooled",
            "DeploymentFailed",
            "Event",
            "FallbackUsed",
            "Hedged",
            "PromptExecuted",
            "PromptRendered",
            "RequestFailed",
            "RequestStarted",
            "Throttled",
            "ToolInvoked",
            "UsageUnknown",
        ],
        "llmplex.events",
    ),
    **dict.fromkeys(
        [
            "Audio",
            "Document",
            "Embeddings",
            "Image",
            "LLMConfig",
            "Message",
            "ModelInfo",
            "OutputSchema",
            "Request",
            "Response",
            "StreamEvent",
            "Tool",
            "ToolCall",
            "Usage",
        ],
        "llmplex.types",
    ),
}

__all__ = [
    "Audio",
    "Budget",
    "BudgetSnapshot",
    "BudgetTracker",
    "CallArgs",
    "Capabilities",
    "Client",
    "Clock",
    "Config",
    "Deadline",
    "DeploymentCooled",
    "DeploymentFailed",
    "Document",
    "Embeddings",
    "Event",
    "FallbackUsed",
    "Hedged",
    "Image",
    "LLMAPIError",
    "LLMAuthenticationError",
    "LLMBadRequestError",
    "LLMBudgetExceededError",
    "LLMClient",
    "LLMConfig",
    "LLMConfigurationError",
    "LLMConnectionError",
    "LLMDeadlineExceededError",
    "LLMError",
    "LLMGroupUnavailableError",
    "LLMIncompleteError",
    "LLMOutputParseError",
    "LLMQuotaExhaustedError",
    "LLMRateLimitError",
    "LLMRefusalError",
    "LLMRequest",
    "LLMServerError",
    "LLMSubprocessError",
    "LLMTimeoutError",
    "LLMToolLoopError",
    "LLMToolSourceError",
    "LLMUsageError",
    "LimitsStorageWarning",
    "MCPServer",
    "Message",
    "ModelInfo",
    "OutputSchema",
    "PromptExecuted",
    "PromptRendered",
    "ProviderInfo",
    "ProviderSettings",
    "Request",
    "RequestFailed",
    "RequestStarted",
    "Response",
    "SharedBudgetTracker",
    "StreamEvent",
    "ThrottleConfig",
    "ThrottlePolicy",
    "Throttled",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolInvoked",
    "ToolResult",
    "Usage",
    "UsageUnknown",
    "abatch",
    "acomplete",
    "aembed",
    "astream",
    "batch",
    "complete",
    "default_client",
    "embed",
    "hookimpl",
    "models",
    "stream",
    "tool_declarations",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llmplex' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def default_client() -> Client:
    """The process-wide [`Client`][llmplex.client.Client] behind `complete()` and its siblings.

    It is built on first use from the configuration files and `LLMPLEX_*` environment variables.
    """
    return process_client.shared()


def _client_since(started: float, kwargs: CallArgs) -> tuple[Client, CallArgs]:
    """The default client, and ``kwargs`` with the call's deadline counted from ``started``.

    The clock starts when the call is made: building the default client on first use
    (config, imports) counts, and with ``timeout=``/``deadline=`` it is held to the deadline.
    """
    built = process_client.current()
    if built is not None:
        return built, built._since(kwargs, started)
    from llmplex.errors import LLMDeadlineExceededError
    from llmplex.reliability.deadline import Deadline
    from llmplex.reliability.guard import call_before

    timeout, deadline = kwargs.get("timeout"), kwargs.get("deadline")
    if deadline is None and isinstance(timeout, (int, float)) and 0 < timeout < math.inf:
        deadline = Deadline.after(timeout, since=started)
    if not isinstance(deadline, Deadline):
        client = default_client()  # no deadline to hold it to (or a bad one: the call says what is wrong)
        return client, client._since(kwargs, started)

    def expired() -> LLMDeadlineExceededError:
        return LLMDeadlineExceededError(
            "deadline reached before the request could be sent, while loading llmplex's configuration "
            "(a first call also imports llmplex's client: allow it more time)",
            attempts=0,
        )

    client = call_before(default_client, deadline, expired)
    return client, client._since({**kwargs, "deadline": deadline}, started)


def complete(model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Response:
    """Send `prompt` to `model` and return the whole answer.

    `model` is `"provider:model"`, an alias, or `None` for the configured default model;
    `prompt` a string, a `Message` or a list of messages (dicts work too). The keywords are
    [`CallArgs`][llmplex.engine.call_args.CallArgs]: sampling options, `system`, `output`,
    `tools`, `timeout`, `fallbacks`, ... It is [`Client.complete`][llmplex.client.Client.complete]
    on [`default_client()`][llmplex.default_client]; failures raise an `LLMError` subclass.
    """
    client, kwargs = _client_since(time.monotonic(), kwargs)
    return client.complete(model, prompt, **kwargs)


async def acomplete(model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Response:
    """[`complete()`][llmplex.complete] for async code: `r = await llmplex.acomplete(model, prompt)`."""
    client, kwargs = _client_since(time.monotonic(), kwargs)
    return await client._answer(model, prompt, kwargs)  # Client.acomplete's answer, without its coroutine


def stream(model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> Iterator[StreamEvent]:
    """Send `prompt` to `model` and yield the answer as it arrives, as [`StreamEvent`][llmplex.types.StreamEvent]s.

    Arguments as for [`complete()`][llmplex.complete]; the last event (`type == "response"`)
    carries the whole `Response`. It is [`Client.stream`][llmplex.client.Client.stream] on the default client.
    """
    client, kwargs = _client_since(time.monotonic(), kwargs)
    return client.stream(model, prompt, **kwargs)


def astream(model: str | None, prompt: PromptInput, **kwargs: Unpack[CallArgs]) -> AsyncIterator[StreamEvent]:
    """[`stream()`][llmplex.stream] for async code: `async for event in llmplex.astream(model, prompt)`."""
    client, kwargs = _client_since(time.monotonic(), kwargs)
    return client.astream(model, prompt, **kwargs)


def tool_declarations(tools: Sequence[ToolInput], provider: str) -> list[dict[str, Any]]:
    """``tools`` in ``provider``'s wire shape (``provider="openai"|"anthropic"|"gemini"|...``); see
    ``Client.tool_declarations``."""
    return default_client().tool_declarations(tools, provider)


def embed(model: str | None, texts: str | Sequence[str], **kwargs: Any) -> Embeddings:
    """One embedding vector per text, in order: [`Client.embed`][llmplex.client.Client.embed] on the default client.

    `model` is `"provider:model"` or `"provider:"` for that provider's default embedding model.
    """
    return default_client().embed(model, texts, **kwargs)


async def aembed(model: str | None, texts: str | Sequence[str], **kwargs: Any) -> Embeddings:
    """[`embed()`][llmplex.embed] for async code."""
    return await default_client().aembed(model, texts, **kwargs)


def models(provider: str) -> list[ModelInfo]:
    """The models `provider` serves: [`Client.models`][llmplex.client.Client.models] on the default client."""
    return default_client().models(provider)
