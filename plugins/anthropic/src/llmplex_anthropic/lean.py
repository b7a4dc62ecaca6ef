"""``messages.create`` without the SDK's request and response models: the same HTTP request, answered as JSON.

The SDK spends most of a short call building pydantic request options and a
``Message`` model that the plugin reads once. For the clients this plugin builds
(``create_client``), ``sender`` returns a
``LeanMessages`` that sends the request the SDK would send — same URL, same
headers (the SDK client's own), the same JSON bytes (the SDK's encoder settings,
keys in the SDK's order) — through the SDK client's own deadline-bound ``httpx2``
client, and decodes the answer with orjson into plain data that
``parse_message`` reads. A streamed call (``stream``/``astream``) sends the same
request with ``"stream": true`` where the SDK writes it, reads the event stream
with ``llmplex.http.iter_sse``/``aiter_sse`` (async: straight on the aiohttp session under the SDK's aiohttp
transport, ``llmplex.http.direct_stream``) and decodes each event with orjson
into plain data (what ``parse_stream_event`` reads, as llmplex-openai's streams
do, without building the SDK's ``RawMessageStreamEvent`` models); like the SDK it
skips pings and unnamed events, raises an ``event: error`` as the SDK's status
error, and closes the response on every exit. Failures are the SDK's own
exceptions (``APITimeoutError``, ``APIConnectionError``, the status errors of
``_make_status_error_from_response``), so classification is unchanged.

Anything the lean path does not reproduce goes through the SDK: a payload key
that is not a plain body field of ``messages.create``, a value that is not
plain JSON, a deprecated model (the SDK warns), a client built elsewhere.
"""

from __future__ import annotations

import functools
import inspect
import json
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import orjson
from anthropic._constants import DEFAULT_TIMEOUT, MODEL_NONSTREAMING_TOKENS
from anthropic.resources.messages import messages as sdk_messages
from anthropic.resources.messages.messages import Messages

from llmplex.http import Reply, ServerSentEvent, aiter_sse, direct_sender, iter_sse
from llmplex.http.direct_stream import DirectStream, open_stream
from llmplex.http.json_answer import json_value

__all__ = ["LeanMessages", "register", "sender"]

# the model lists ``Messages.create`` consults: defined in its module up to anthropic 2.12, imported there from
# anthropic._data (with other entries) since 2.13 -- read where the SDK reads them
_DEPRECATED_MODELS: Mapping[str, str] = vars(sdk_messages)["DEPRECATED_MODELS"]
_WARN_WITH_THINKING: Sequence[str] = vars(sdk_messages)["MODELS_TO_WARN_WITH_THINKING_ENABLED"]

_NOT_BODY = frozenset(
    {"self", "user_profile_id", "workspace_id", "extra_headers", "extra_query", "extra_body", "timeout"}
)
_BODY_ORDER = {
    name: index for index, name in enumerate(inspect.signature(Messages.create).parameters) if name not in _NOT_BODY
}
"""The body fields of ``messages.create`` (``stream`` too, set by ``stream``/``astream`` only), in the SDK's order."""

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""The SDK's JSON encoder settings (``anthropic._utils._json``), so the body is byte for byte the SDK's."""

_TIMING = frozenset({b"x-stainless-timeout", b"x-stainless-read-timeout"})
"""The SDK's per-call headers holding the call's read timeout."""

_UNSET = str(anthropic.NOT_GIVEN).encode()
"""What the SDK writes in ``x-stainless-timeout`` for a streamed call given no timeout (its ``NOT_GIVEN``'s text)."""

_PLANS_KEPT = 64
"""The most plans (``LeanMessages.plans``) one sender keeps, and the most key orders ``_ORDERS`` keeps."""

_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
"""A payload's keys (as given) in the SDK's body order: worked out once for each (calls repeat theirs)."""

_SENDERS: weakref.WeakKeyDictionary[Any, LeanMessages] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class LeanMessages:
    """``POST /v1/messages`` of one SDK client, sent through its ``httpx2`` client."""

    sdk: anthropic.Anthropic | anthropic.AsyncAnthropic
    http: httpx2.Client | httpx2.AsyncClient
    url: httpx2.URL
    address: str
    """``url`` as text (what ``llmplex.http.direct_sender`` posts to)."""
    headers: list[tuple[bytes, bytes]] = field(repr=False)
    """The headers the SDK's request gets from both clients (key, version, user agent, platform), in its order,
    with ``_TIMING`` values to fill per call; never shown in the repr."""
    plans: dict[
        tuple[str, int], tuple[Sequence[tuple[bytes, bytes]], float | httpx2.Timeout, dict[str, float | None]]
    ] = field(default_factory=dict, repr=False, compare=False)
    """Per model and ``max_tokens``, a non-streamed call's headers, SDK timeout and its ``as_dict()`` when the call
    gives no timeout (``_plan``: the SDK works them out again on every call)."""

    def request(
        self, payload: dict[str, Any], body: bytes, timeout: float | None, *, stream: bool = False
    ) -> httpx2.Request:
        """The request ``messages.create(**payload, stream=stream, timeout=timeout)`` would send.

        A ``timeout`` of ``None`` takes the SDK's default.
        """
        headers: Sequence[tuple[bytes, bytes]]
        if timeout is None:  # the plan's, worked out once (``_plan``)
            headers, chosen, _ = self._plan(payload, None, stream=stream)
        else:  # each call's own: no ``as_dict()`` (``_build`` makes the request's)
            headers, chosen = self._parts(payload, timeout)
        return self._build(body, headers, chosen)

    def _parts(
        self, payload: dict[str, Any], timeout: float | None, *, stream: bool = False
    ) -> tuple[list[tuple[bytes, bytes]], float | httpx2.Timeout]:
        """The headers and the timeout of ``request``."""
        chosen: float | httpx2.Timeout
        if timeout is not None:
            chosen, read = timeout, str(timeout).encode()
        elif stream:  # the client's timeout, which ``sender`` made sure is the SDK's default
            chosen = DEFAULT_TIMEOUT
            read = str(DEFAULT_TIMEOUT.read).encode()
            timing = {b"x-stainless-timeout": _UNSET, b"x-stainless-read-timeout": read}
            return [(name, timing.get(name, value)) for name, value in self.headers], chosen
        else:  # the SDK's own choice for a non-streamed call: 10 minutes, or "stream it" for long answers
            model = payload["model"]
            chosen = self.sdk._calculate_nonstreaming_timeout(
                payload["max_tokens"], MODEL_NONSTREAMING_TOKENS.get(model, None)
            )
            read = str(chosen.read).encode()
        return [(name, read if name in _TIMING else value) for name, value in self.headers], chosen

    def _plan(
        self, payload: dict[str, Any], timeout: float | None, *, stream: bool = False
    ) -> tuple[Sequence[tuple[bytes, bytes]], float | httpx2.Timeout, dict[str, float | None]]:
        """``_parts`` and the timeout's ``as_dict()``. Given no timeout, a non-streamed call's depend on the model
        and ``max_tokens`` alone: worked out once for each (kept in ``plans``, never changed after); a streamed
        call's on nothing (``_streamed``)."""
        if timeout is not None:  # a deadline's time left: each call's own
            headers, chosen = self._parts(payload, timeout, stream=stream)
            return headers, chosen, httpx2.Timeout(chosen).as_dict()
        if stream:
            return self._streamed
        key = (payload["model"], payload["max_tokens"])
        plan = self.plans.get(key)
        if plan is None:
            headers, chosen = self._parts(payload, None)  # the SDK's own choice (or its ValueError, raised)
            if len(self.plans) >= _PLANS_KEPT:
                self.plans.clear()
            # kept as the same objects, the headers a tuple: ``llmplex.http.direct_sender`` tells a repeat by identity
            plan = self.plans[key] = (tuple(headers), chosen, httpx2.Timeout(chosen).as_dict())
        return plan

    @functools.cached_property
    def _streamed(self) -> tuple[tuple[tuple[bytes, bytes], ...], float | httpx2.Timeout, dict[str, float | None]]:
        """``_plan`` of a streamed call given no timeout: the same for every such call of this client, worked out at
        its first (as the same objects, the headers a tuple: ``llmplex.http.direct_sender`` tells a repeat by
        identity)."""
        headers, chosen = self._parts({}, None, stream=True)  # a streamed call's payload chooses nothing
        return tuple(headers), chosen, httpx2.Timeout(chosen).as_dict()

    def _build(
        self, body: bytes, headers: Sequence[tuple[bytes, bytes]], chosen: float | httpx2.Timeout
    ) -> httpx2.Request:
        if self.http.cookies:  # cookies a server set: merged the client's way
            return self.http.build_request("POST", self.url, content=body, headers=headers, timeout=chosen)
        extensions = {"timeout": httpx2.Timeout(chosen).as_dict()}
        return httpx2.Request("POST", self.url, content=body, headers=headers, extensions=extensions)

    def send(self, payload: dict[str, Any], body: bytes, timeout: float | None) -> Any:
        """The decoded answer of one call (sync client); ``body`` is ``sender``'s."""
        assert isinstance(self.http, httpx2.Client)
        request = self.request(payload, body, timeout)
        try:
            response = self.http.send(request)
        except Exception as error:
            raise _transport_error(error, request) from error
        return self._answer(response)

    async def asend(self, payload: dict[str, Any], body: bytes, timeout: float | None) -> Any:
        """Async twin of ``send``; straight on the aiohttp session of a client on the SDK's aiohttp transport
        (``llmplex.http.direct_sender``), the same request without httpx's objects."""
        assert isinstance(self.http, httpx2.AsyncClient)
        direct = direct_sender(self.http)
        if direct is None:
            request = self.request(payload, body, timeout)
            try:
                response = await self.http.send(request)
            except Exception as error:
                raise _transport_error(error, request) from error
            return self._answer(response)
        headers, chosen, timeouts = self._plan(payload, timeout)
        # a partial, not a closure: no cell for each of its arguments in this coroutine's frame while it is in flight
        request_built = functools.partial(self._build, body, headers, chosen)
        try:
            answer = await direct.post(self.address, headers, body, timeouts, request_built)
        except Exception as error:
            raise _transport_error(error, request_built()) from error
        return self._answer(answer)

    def _answer(self, response: httpx2.Response | Reply) -> Any:
        """The decoded answer: ``json.loads``' value, as the SDK reads it (an integer past 64 bits kept whole), read
        by orjson where that gives the same value."""
        if not isinstance(response, Reply) and not response.is_success:  # a Reply is a 2xx answer
            raise self.sdk._make_status_error_from_response(response) from None
        return json_value(response.content, orjson.loads)

    def stream(self, payload: dict[str, Any], body: bytes, timeout: float | None) -> Iterator[Any]:
        """The decoded events of one streamed call (sync client), opened now; closed when they end or are closed."""
        assert isinstance(self.http, httpx2.Client)
        request = self.request(payload, body, timeout, stream=True)
        try:
            response = self.http.send(request, stream=True)
        except Exception as error:
            raise _transport_error(error, request) from error
        if not response.is_success:
            try:
                response.read()
            finally:
                response.close()
            raise self.sdk._make_status_error_from_response(response) from None
        return self._events(response)

    async def astream(self, payload: dict[str, Any], body: bytes, timeout: float | None) -> AsyncIterator[Any]:
        """Async twin of ``stream``; opened and read straight on the aiohttp session of a client on the SDK's
        aiohttp transport (``llmplex.http.direct_stream``), as ``asend`` posts a whole answer."""
        assert isinstance(self.http, httpx2.AsyncClient)
        direct = direct_sender(self.http)
        response: httpx2.Response | DirectStream
        if direct is None:
            request = self.request(payload, body, timeout, stream=True)
            try:
                response = await self.http.send(request, stream=True)
            except Exception as error:
                raise _transport_error(error, request) from error
        else:
            # as ``asend``: the plan's headers and timeouts, the same objects on every stream given no timeout
            headers, chosen, timeouts = self._plan(payload, timeout, stream=True)
            request_built = functools.partial(self._build, body, headers, chosen)
            try:
                response = await open_stream(direct, self.address, headers, body, timeouts, request_built)
            except Exception as error:
                raise _transport_error(error, request_built()) from error
        if isinstance(response, httpx2.Response) and not response.is_success:  # a DirectStream is a 2xx answer
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise self.sdk._make_status_error_from_response(response) from None
        return self._aevents(response)

    def _events(self, response: httpx2.Response) -> Iterator[Any]:
        try:
            for sse in iter_sse(response.iter_bytes()):  # this loop runs for every chunk: ``_event``'s common case
                if sse.event in _DATA_EVENTS and sse.data:  # inline
                    yield orjson.loads(sse.data)
                elif (event := self._event(sse, response)) is not None:
                    yield event
        finally:
            response.close()

    async def _aevents(self, response: httpx2.Response | DirectStream) -> AsyncIterator[Any]:
        try:
            async for sse in aiter_sse(response.aiter_bytes()):  # as in ``_events``
                if sse.event in _DATA_EVENTS and sse.data:
                    yield orjson.loads(sse.data)
                elif (event := self._event(sse, response)) is not None:
                    yield event
        finally:
            await response.aclose()

    def _event(self, sse: ServerSentEvent, response: httpx2.Response | DirectStream) -> Any:
        """The decoded data of ``sse`` as the SDK's ``Stream`` reads it (``anthropic.Stream.__stream__``), its
        error event raised as the SDK raises it (carrying httpx's ``Response``); ``None`` for what it skips."""
        if sse.event == "error":
            body: Any = sse.data
            try:
                body = orjson.loads(sse.data)
                message = f"{body}"
            except orjson.JSONDecodeError:
                message = sse.data or f"Error code: {response.status_code}"
            answered = response.as_response() if isinstance(response, DirectStream) else response
            raise self.sdk._make_status_error(message, body=body, response=answered)
        if sse.event in _SKIPPED or not sse.data:
            return None
        return orjson.loads(sse.data)


_DATA_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta"}
)
"""The events of every answer, decoded as they are (``_event``'s common case; ``message_stop`` and the rest go
through ``_event``)."""
_SKIPPED = frozenset({"ping", "message"})
"""Events the SDK's ``Stream`` skips: pings and events without a name (``iter_sse`` calls those ``message``)."""


def _transport_error(error: Exception, request: httpx2.Request) -> Exception:
    """The SDK's exception for a failed send (``_attempt_request``): a timeout, else a connection error."""
    if isinstance(error, anthropic.AnthropicError):
        return error
    if isinstance(error, httpx2.TimeoutException):
        return anthropic.APITimeoutError(request=request)
    return anthropic.APIConnectionError(request=request)


def register(sdk: anthropic.Anthropic | anthropic.AsyncAnthropic, http: httpx2.Client | httpx2.AsyncClient) -> None:
    """Let calls on ``sdk`` (built on ``http``, with an explicit key and no query) take the lean path."""
    if sdk.default_query or sdk.custom_auth is not None:
        return
    base = sdk.base_url
    url = base.copy_with(raw_path=base.raw_path + b"v1/messages")
    per_call = dict.fromkeys(("x-stainless-timeout", "x-stainless-retry-count", "x-stainless-read-timeout"), "0")
    sdk_headers = {**per_call, **{name: value for name, value in sdk.default_headers.items() if isinstance(value, str)}}
    merged = httpx2.Headers(http.headers)  # what httpx2's build_request does with the SDK's headers
    merged.update(sdk_headers)
    _SENDERS[sdk] = LeanMessages(sdk, http, url, str(url), merged.raw)


def sender(
    client: Any, payload: dict[str, Any], timeout: float | None, *, stream: bool = False
) -> tuple[LeanMessages, bytes] | None:
    """The lean sender for ``client`` and the body it sends, when that is exactly what the SDK would send.

    ``stream``: the body of the streamed call (``"stream": true``).
    """
    try:
        lean = _SENDERS.get(client)
    except TypeError:  # not weakly referenceable: not a client of ours
        return None
    if lean is None or "stream" in payload or not _BODY_ORDER.keys() >= payload.keys():
        return None
    model = payload.get("model")
    if not isinstance(model, str) or model in _DEPRECATED_MODELS or not isinstance(payload.get("max_tokens"), int):
        return None
    if model in _WARN_WITH_THINKING and payload.get("thinking"):
        return None
    if timeout is None and lean.sdk.timeout != DEFAULT_TIMEOUT:
        return None
    fields = {**payload, "stream": True} if stream else payload
    names = tuple(fields)
    order = _ORDERS.get(names)
    if order is None:
        if len(_ORDERS) >= _PLANS_KEPT:
            _ORDERS.clear()
        order = _ORDERS[names] = tuple(sorted(names, key=_BODY_ORDER.__getitem__))
    try:
        body = _ENCODER.encode({name: fields[name] for name in order})
    except (TypeError, ValueError):  # not plain JSON: the SDK transforms it
        return None
    return lean, body.encode()
