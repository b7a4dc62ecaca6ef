"""The ``bedrock`` provider: hook implementations on boto3's ``bedrock-runtime`` Converse API.

boto3 has no async client, so core runs the calls on its worker threads for
async callers, held to the deadline like any other call. Streams send boto3's
own request without its per-call pipeline (``llmplex_bedrock.direct``), on the
plugin's httpx client or, async, on aiohttp (``llmplex_bedrock.aio``), where
that request is exactly boto3's; anything else goes through boto3.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from botocore.eventstream import ParserError as EventStreamParserError

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Request, Response, StreamEvent, StreamState, Tool
from llmplex_bedrock.aio import aopen, athreaded
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.direct import LeanRequest, lean_request, raise_for_status
from llmplex_bedrock.errors import classify_error
from llmplex_bedrock.lean import aread_events, lean_events
from llmplex_bedrock.request import SAMPLING_OPTIONS, format_request, tool_spec
from llmplex_bedrock.response import parse_response
from llmplex_bedrock.settings import BedrockSettings
from llmplex_bedrock.streaming import parse_event
from llmplex_bedrock.transport import aws_response, call_timeout, raw_body

DEFAULT_MODEL = "amazon.nova-micro-v1:0"
"""The model of a request naming only the prefix: Amazon's smallest on-demand Converse model."""


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``bedrock`` prefix."""
    register(
        ProviderInfo(
            name="bedrock",
            settings_model=BedrockSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                sampling_options=SAMPLING_OPTIONS,
                input_parts=frozenset({"image", "document"}),
            ),
            default_model=DEFAULT_MODEL,
            create_client=create_client,
            close_client=close_client,
            description="Amazon Bedrock (Converse, ConverseStream) on boto3; AWS credential chain, SigV4.",
        )
    )


@hookimpl
def llmplex_format(request: Request, settings: BedrockSettings) -> dict[str, Any]:
    """The ``converse`` keyword arguments for ``request``."""
    return format_request(request, settings)


@hookimpl
def llmplex_call(payload: dict[str, Any], settings: BedrockSettings, client: Any, timeout: float | None) -> Any:
    """One ``converse`` call (SigV4-signed by botocore), each read bounded by ``timeout``."""
    with call_timeout(_timeout(timeout, settings)):
        return client.converse(**payload)


@hookimpl
def llmplex_stream(
    payload: dict[str, Any], settings: BedrockSettings, client: Any, timeout: float | None
) -> Iterator[Any]:
    """The events of one ConverseStream call; the event stream is closed however the reading ends."""
    return _stream(payload, settings, client, timeout, _lean(client))


def _stream(
    payload: dict[str, Any], settings: BedrockSettings, client: Any, timeout: float | None, lean: LeanRequest | None
) -> Iterator[Any]:
    """``llmplex_stream`` with the lean request decided: sent that way, or through boto3 (``None``)."""
    seconds = _timeout(timeout, settings)
    if lean is not None:
        return _events(_open(lean, payload, seconds))
    with call_timeout(seconds):  # for the sender botocore's pipeline calls
        stream = client.converse_stream(**payload)["stream"]
    return _events(stream)


def _lean(client: Any) -> LeanRequest | None:
    """The lean request of a client ``create_client`` built, while it is exactly boto3's."""
    return lean_request(client) if sender_of(client) is not None else None


def _open(lean: LeanRequest, payload: dict[str, Any], seconds: float | None = None) -> Any:
    """Send the lean request through the client's ``HttpxSender`` (``seconds`` per connect/read/write, ``None``: the
    sender's default): the open ``EventStream``, or boto3's error (an answer under 300 is read as a stream at once,
    without the ``AWSResponse`` only an error is read from)."""
    sender = sender_of(lean.client)
    assert sender is not None
    method, url, headers, body = lean.sign(payload)
    response = sender.post(method, url, headers, body, seconds)
    if response.status_code >= 300:
        read = aws_response(url, response)
        try:
            raise_for_status(lean.client, lean.operation, read)
        except BaseException:
            read.raw.close()
            raise
    return lean.events_of(raw_body(response))


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], settings: BedrockSettings, client: Any, timeout: float | None
) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``: the lean request sent on aiohttp and read in the loop, else boto3's
    stream on worker threads."""
    lean = _lean(client)
    if lean is None:
        return await athreaded(lambda: _stream(payload, settings, client, timeout, None))
    sender = sender_of(client)
    assert sender is not None
    seconds = _timeout(timeout, settings) or sender.default_timeout
    opened = await aopen(lean, sender.async_http(), payload, seconds)
    return _aevents(aread_events(opened.chunks, lean.decoder), opened.aclose)


def _events(stream: Any) -> Iterator[Any]:
    """The stream's events (its reads keep the timeout its request was sent with), then the stream closed.

    They are read the lean way (``lean_events``: the frames read as botocore's decoder reads them, json, compiled
    converters) where that gives exactly boto3's events, else by boto3's ``EventStream``. A header block botocore's
    header parser fails on with a bare Python error (bytes that are not UTF-8, a truncated header, an unknown
    header type) is raised as botocore's event-stream ``ParserError``, which is classified as the server's fault.
    """
    try:
        lean = lean_events(stream)
        yield from stream if lean is None else lean
    except _MALFORMED as error:
        raise EventStreamParserError(f"a malformed event-stream header block: {type(error).__name__}") from error
    finally:
        stream.close()


_MALFORMED = (UnicodeDecodeError, struct.error, KeyError)


async def _aevents(events: AsyncIterator[Any], close: Callable[[], Any]) -> AsyncIterator[Any]:
    """Async twin of ``_events`` over the lean reading of an aiohttp answer."""
    try:
        async for event in events:
            yield event
    except _MALFORMED as error:
        raise EventStreamParserError(f"a malformed event-stream header block: {type(error).__name__}") from error
    finally:
        await close()


def _timeout(timeout: float | None, settings: BedrockSettings) -> float | None:
    """The deadline's remaining seconds, capped by the instance's ``timeout``."""
    limit = settings.timeout
    if timeout is None or limit is None:
        return limit if timeout is None else timeout
    return min(timeout, limit)


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """The core response for a ``converse`` answer."""
    return parse_response(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """Core stream events for one ConverseStream event."""
    return parse_event(raw_event, state)


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool as a Converse ``toolSpec``."""
    return [tool_spec(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Map botocore exceptions; ``None`` lets core's fallback handle the rest."""
    return classify_error(error)


_COUNTED = ("messages", "system", "toolConfig")
"""The ``converse`` keys Bedrock's ``CountTokens`` takes."""


@hookimpl
async def llmplex_acount_tokens(request: Request, settings: BedrockSettings, client: Any) -> tuple[int, str]:
    """Bedrock's own count (``CountTokens`` of the ``converse`` input ``request`` would send), in a worker thread
    (botocore is synchronous)."""
    payload = format_request(request, settings)
    converse = {key: payload[key] for key in _COUNTED if payload.get(key)}
    counted = await asyncio.to_thread(client.count_tokens, modelId=payload["modelId"], input={"converse": converse})
    return int(counted["inputTokens"]), "provider"
