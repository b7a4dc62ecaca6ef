"""The plugin contract: every hook a provider or observer plugin may implement.

Pipeline hooks (``format`` to ``classify_error``, and the ``batch_*`` hooks of
provider-native batches) are called only on the plugin of the provider a
request resolved to, plus non-provider plugins that wrap them
(``wrapper=True``) for caching, tracing or redaction. Implementations may take
any subset of a hook's arguments, by name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from llmplex.errors import LLMError
    from llmplex.events import Event
    from llmplex.provider import ProviderInfo, ProviderSettings
    from llmplex.types import (
        BatchLimits,
        BatchOutcome,
        BatchRequest,
        BatchStatus,
        Embeddings,
        ModelInfo,
        Request,
        Response,
        StreamEvent,
        StreamState,
        Tool,
    )

PROJECT_NAME = "llmplex"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]


@hookspec
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Declare the providers this plugin serves.

    Called once, when the plugin is first loaded. Call ``register`` with one
    ``ProviderInfo`` per prefix; the entry-point name
    must be one of them.
    """


@hookspec(firstresult=True)
def llmplex_format(request: Request, settings: ProviderSettings) -> dict[str, Any]:
    """Translate a core ``Request`` into the provider's payload.

    Called before every attempt. Return plain data (the keyword arguments of the
    SDK call or the JSON body). Raise ``LLMConfigurationError`` for a request the
    provider cannot express (an unsupported option), before anything is sent.
    """


@hookspec(firstresult=True)
def llmplex_call(
    payload: dict[str, Any], settings: ProviderSettings, client: Any, timeout: float | None, request: Request | None
) -> Any:
    """Send ``payload`` synchronously and return the provider's raw response.

    ``client`` is the object ``ProviderInfo.create_client`` built for this
    provider instance; ``timeout`` is the seconds left before the deadline (or
    ``None``); ``request`` is what ``payload`` was formatted from (``None`` where
    there is none), for wrappers such as the response cache.
    Do not retry: raise the SDK's exception and core classifies it.
    """


@hookspec(firstresult=True)
def llmplex_acall(
    payload: dict[str, Any], settings: ProviderSettings, client: Any, timeout: float | None, request: Request | None
) -> Awaitable[Any]:
    """Async twin of ``llmplex_call``: return an awaitable of the raw response.

    A provider implementing only one of ``call``/``acall`` is bridged by core.
    """


@hookspec(firstresult=True)
def llmplex_stream(
    payload: dict[str, Any], settings: ProviderSettings, client: Any, timeout: float | None
) -> Iterator[Any]:
    """Send ``payload`` (carrying the stream flag) as a streaming request; return an iterator of raw events.

    Open the response in the hook and raise for an error status before returning:
    core classifies and retries a failure to open like a failed call. The iterator
    owns the response and closes it when it ends; core closes the iterator when the
    caller stops early, on an error, or at the deadline.
    """


@hookspec(firstresult=True)
def llmplex_astream(
    payload: dict[str, Any], settings: ProviderSettings, client: Any, timeout: float | None
) -> Awaitable[AsyncIterator[Any]]:
    """Async twin of ``llmplex_stream``: return an awaitable of an async iterator of raw events.

    An ``async def`` hook returning an async generator does it: core awaits the
    hook (opening errors raise there), then iterates what it returned.
    """


@hookspec(firstresult=True)
def llmplex_parse(raw: Any, request: Request, settings: ProviderSettings) -> Response:
    """Translate the raw response into a core ``Response``.

    ``settings`` are the provider instance's (most providers need only ``raw`` and
    ``request``). Core fills ``provider``, ``attempts`` and ``latency`` afterwards.
    An answer cut by the token limit returns ``finish_reason="length"`` and a
    refusal ``finish_reason="refusal"`` with ``refusal`` set, not an exception: core
    raises ``LLMIncompleteError`` / ``LLMRefusalError`` where an answer must be whole
    (structured output).
    """


@hookspec(firstresult=True)
def llmplex_parse_event(raw_event: Any, state: StreamState) -> Sequence[StreamEvent]:
    """Translate one raw stream event into zero or more core stream events.

    ``state`` lives for one stream: keep ids or partial data in ``state.data``.
    Core assembles text, tool calls, usage and finish reason into the final
    ``response`` event itself, and reads the response's ``response_id`` and
    ``model`` from the events: set them on the events whose raw event carries
    them. ``tool_call_index`` identifies one call among parallel calls: give each
    call its own index and the same index on every piece of it. Return an empty
    sequence for events with no content.
    """


@hookspec(firstresult=True)
def llmplex_classify_error(error: BaseException, settings: ProviderSettings) -> LLMError | None:
    """Map an exception raised by ``call``/``stream`` to the core taxonomy.

    Return ``None`` for exceptions you do not recognise; core's fallback
    classifier (``trylast``) handles those.
    """


@hookspec(firstresult=True)
def llmplex_tool_declarations(tools: Sequence[Tool], settings: ProviderSettings) -> list[dict[str, Any]]:
    """Declare ``tools`` the way this provider's requests carry them: one plain dict per tool, in order.

    Behind ``llmplex.tool_declarations``, for code that builds its own
    provider requests. Return exactly what ``llmplex_format`` puts on the wire
    for each tool (call the same function). Only a provider whose capabilities
    include tools is asked.
    """


@hookspec(firstresult=True)
def llmplex_delete_response(response_id: str, settings: ProviderSettings, client: Any) -> bool:
    """Delete a stored response (response chains); return ``True`` when deleted."""


@hookspec(firstresult=True)
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: ProviderSettings,
    client: Any,
    timeout: float | None,
) -> Embeddings:
    """Embed one batch of ``texts`` with ``model``; return one vector per text, in order.

    Core splits long lists into batches of the provider's
    ``Capabilities.embedding_batch_size``, retries, and refuses ``dimensions``
    before calling when ``Capabilities.embedding_dimensions`` is false. Do not
    retry: raise the SDK's exception and core classifies it.
    """


@hookspec(firstresult=True)
def llmplex_aembed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: ProviderSettings,
    client: Any,
    timeout: float | None,
) -> Awaitable[Embeddings]:
    """Async twin of ``llmplex_embed`` (a provider implementing only one is bridged by core)."""


@hookspec(firstresult=True)
def llmplex_acount_tokens(
    request: Request, settings: ProviderSettings, client: Any
) -> Awaitable[tuple[int, str] | None]:
    """The input tokens ``request`` would count, and how they were counted: ``"provider"`` (the provider's own
    count endpoint) or ``"tokenizer"`` (the model's own tokenizer); ``None`` when this model has neither (core
    then estimates). ``client`` is the async SDK client. Raise the SDK's exception on failure.
    """


@hookspec(firstresult=True)
def llmplex_models(settings: ProviderSettings, client: Any) -> Sequence[ModelInfo]:
    """The models this provider serves, as ``ModelInfo`` (``client.models(provider)``).

    Ask the provider where it can list them; fill what it does not say
    (context window, max output) from what the plugin or genai-prices knows.
    Raise the SDK's exception on failure and core classifies it.
    """


@hookspec(firstresult=True)
def llmplex_batch_limits(settings: ProviderSettings) -> BatchLimits:
    """How many requests and bytes one batch of this provider may hold (``llmplex batch --provider-batch``).

    Core splits a job into batches within these limits. Optional: without it a
    job goes out as one batch. Let settings override the provider's published
    limits so that a test, or a smaller account, can use smaller ones.
    """


@hookspec(firstresult=True)
def llmplex_batch_submit(requests: Sequence[BatchRequest], label: str, settings: ProviderSettings, client: Any) -> str:
    """Send ``requests`` as one batch of the provider's Batch API; return the provider's batch id.

    Each payload is what ``llmplex_format`` returned for its request. ``label``
    names this submission uniquely (``llmplex-`` and hex digits); attach it to
    the batch where the provider keeps such data (metadata, a file name), so that
    ``llmplex_batch_find`` can recover the batch. ``client`` is the sync SDK
    client. Do not retry: raise the SDK's exception and core classifies it and
    applies the provider's retry policy. A provider implementing ``batch_submit``,
    ``batch_poll`` and ``batch_results`` supports ``--provider-batch``.
    """


@hookspec(firstresult=True)
def llmplex_batch_find(label: str, settings: ProviderSettings, client: Any) -> str | None:
    """The id of the batch submitted earlier under ``label``, or ``None`` when there is none.

    Asked when a submission may have reached the provider without its id being
    recorded (the run was killed during ``llmplex_batch_submit``, or the call failed
    after the provider took it), before submitting again. Optional: without it
    core submits again and warns that the batch may now exist twice.
    """


@hookspec(firstresult=True)
def llmplex_batch_poll(batch_id: str, settings: ProviderSettings, client: Any) -> BatchStatus:
    """Where batch ``batch_id`` stands: done or not, and the provider's own status and request counts."""


@hookspec(firstresult=True)
def llmplex_batch_results(batch_id: str, settings: ProviderSettings, client: Any) -> Iterable[BatchOutcome]:
    """The outcome of each request of the finished batch ``batch_id``, in any order, matched by ``custom_id``.

    A succeeded outcome carries the raw response that ``llmplex_parse`` reads (the
    same object type as ``llmplex_call`` returns); an errored one the taxonomy
    error of what the provider reported. Requests without an outcome become
    errors in place. Called only once ``llmplex_batch_poll`` said ``done``,
    and again after an interruption: it must not consume the results.
    """


@hookspec
def llmplex_event(event: Event) -> None:
    """Observe what happens: called for every ``llmplex.events`` event, on every plugin."""


@hookspec
def llmplex_observing() -> bool:
    """Whether this observer wants events right now; return ``False`` while idle.

    Optional, for plugins implementing ``llmplex_event``. While every observer says
    ``False`` (and no ``llmplex`` log level is enabled), core builds no event at all.
    Asked before each event is built, so it must be cheap (no I/O, no locks held long);
    when it turns ``True`` (a tracer configured later, a first subscriber) events flow
    again at once. An observer without this hook always receives events.
    """
