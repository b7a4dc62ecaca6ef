"""Send a JSON request through the SDK client's own HTTP client, skipping the SDK's request and response models.

The SDK spends most of a short call building its request options, transforming
the body against its TypedDicts and constructing its response models. Here the
plugin's payload, already the exact JSON body, is serialized once and posted
with the SDK client's own ``httpx`` (or ``httpx2``) client — the one
``llmplex_openai.clients`` built to hold the llmplex deadline — and the
answer is decoded to a plain ``dict``. What the server sees is what the SDK
sends: the URL, query and headers come from a request the SDK itself built
once per client and path (``User-Agent``, ``X-Stainless-*``, ``Authorization``,
organization, project, default headers and query), the body is serialized as
the SDK serializes it (same key order, same separators). Failures are the
SDK's own exceptions, built the way the SDK builds them, so
``llmplex_openai.errors.classify_error`` classifies them unchanged.

A stream (``stream``/``astream``: the payload says ``"stream": true``) is the
same request, read with ``llmplex.http.iter_sse``/``aiter_sse`` and decoded with
orjson into the plain ``dict`` of each event, as the SDK's ``Stream`` reads it:
``[DONE]`` ends it (the body is still read to its end, so the connection goes
back to the pool instead of being closed), an event whose data holds an ``"error"`` is the SDK's
``APIError``, an error status is the SDK's status error, and a failure while
reading (a cut or reset connection, the read timeout) propagates as it does
from the SDK's stream. The response is closed on every exit, the consumer's
``close`` included. An async stream on the SDK's aiohttp transport is opened
and read straight on its aiohttp session (``llmplex.http.direct_stream``), as
``apost`` posts a whole answer.

Clients whose requests the SDK rewrites per call (a provider runtime, an API
key provider) do not suit it: ``suits`` says so, and they go through the SDK.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NoReturn

import openai
import orjson
from openai import AsyncOpenAI, OpenAI
from openai._models import FinalRequestOptions

from llmplex.http import Reply, aiter_sse, direct_sender, http_library, iter_sse
from llmplex.http.direct_stream import open_stream
from llmplex.http.json_answer import json_value

__all__ = ["apost", "astream", "post", "stream", "suits"]

_READ_TIMEOUT = b"x-stainless-read-timeout"


_MAX_LAYOUTS = 256
"""Payload layouts (key sequences) ``_Wire.body`` keeps; past that it starts again."""
_layouts: dict[tuple[int, tuple[str, ...]], tuple[dict[str, int], tuple[str, ...] | None]] = {}
"""Per wire's parameter order (by identity: held, so its id stays its own) and payload's keys in their order, the
order ``_Wire.body`` writes them in (``None``: as they are)."""
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""``json.dumps`` with these settings, its encoder built once (``dumps`` builds one a call for non-default ones)."""


@dataclass(frozen=True)
class _Wire:
    """Where and with which headers one SDK client posts to one path: the parts of the SDK's own request.

    ``headers`` are already merged with the HTTP client's defaults, as ``build_request`` merges them, and keep
    the SDK's spelling of each name.
    """

    library: ModuleType
    url: Any
    address: str
    """``url`` as text (what ``llmplex.http.direct_sender`` posts to)."""
    headers: tuple[tuple[bytes, bytes], ...]
    extensions: dict[str, Any]
    order: dict[str, int]
    timed: int | None
    """Where in ``headers`` the ``x-stainless-read-timeout`` the SDK announces is (``None``: it announces none)."""
    kept: list[tuple[Any, dict[str, float | None]]] = field(default_factory=list, repr=False, compare=False)
    """The timeout ``timeouts`` was last given and its dict (one tuple, replaced whole: threads may share it)."""

    def timeouts(self, timeout: Any) -> dict[str, float | None]:
        """httpx's ``Timeout(timeout).as_dict()`` (not to be changed), kept for the timeout object last given: a
        client's own, given on every call that has no timeout of its own."""
        kept = self.kept[0] if self.kept else None
        if kept is None or kept[0] is not timeout:
            kept = (timeout, self.library.Timeout(timeout).as_dict())
            self.kept[:] = [kept]
        return kept[1]

    def headers_for(self, timeout: float | None) -> list[tuple[bytes, bytes]]:
        """The SDK's headers; with a timeout, the ``x-stainless-read-timeout`` it would announce."""
        headers = list(self.headers)
        if timeout is not None and self.timed is not None:  # the other headers stay the same objects
            headers[self.timed] = (headers[self.timed][0], str(timeout).encode())
        return headers

    def body(self, payload: dict[str, Any]) -> bytes:
        """``payload`` as the SDK serializes it: the method's parameters in its order, extra keys after (that order
        worked out once per payload's keys)."""
        keys, order = tuple(payload), self.order
        found = _layouts.get((id(order), keys))
        if found is None or found[0] is not order:
            last = len(order)
            ordered = tuple(sorted(keys, key=lambda name: order.get(name, last)))
            found = (order, None if ordered == keys else ordered)
            if len(_layouts) >= _MAX_LAYOUTS:
                _layouts.clear()
            _layouts[id(order), keys] = found
        layout = found[1]
        return _encode(payload if layout is None else {name: payload[name] for name in layout}).encode()


_wires: weakref.WeakKeyDictionary[OpenAI | AsyncOpenAI, dict[str, _Wire]] = weakref.WeakKeyDictionary()


def _wire(client: OpenAI | AsyncOpenAI, path: str, method: Callable[..., Any]) -> _Wire:
    per_path = _wires.get(client)
    if per_path is None:
        per_path = _wires.setdefault(client, {})
    wire = per_path.get(path)
    if wire is None:
        template = client._build_request(FinalRequestOptions(method="post", url=path))
        headers = tuple((k, v) for k, v in template.headers.raw if k.lower() != b"content-length")
        extensions = {k: v for k, v in template.extensions.items() if k != "timeout"}
        order = {name: i for i, name in enumerate(inspect.signature(method).parameters)}
        library = http_library(client._client)
        timed = next((at for at, (name, _) in enumerate(headers) if name.lower() == _READ_TIMEOUT), None)
        wire = _Wire(library, template.url, str(template.url), headers, extensions, order, timed)
        per_path[path] = wire
    return wire


def suits(client: OpenAI | AsyncOpenAI) -> bool:
    """Whether requests of ``client`` can skip the SDK: it sends with a fixed key and no per-request hooks."""
    return getattr(client, "_provider_runtime", None) is None and getattr(client, "_api_key_provider", None) is None


def _decoded(client: OpenAI | AsyncOpenAI, response: Any) -> Any:
    """The SDK's reading of an answer: its status error, the decoded JSON, or the text of a non-JSON body.

    ``response`` is an httpx ``Response``, or a ``Reply`` of ``llmplex.http.direct_sender`` (a 2xx answer).
    """
    if isinstance(response, Reply):
        if (response.content_type or "*").split(";")[0].endswith("json"):
            return _json(response.content)
        response = response.response()
    if response.status_code >= 400:
        raise client._make_status_error_from_response(response) from None
    content_type = response.headers.get("content-type", "*").split(";")[0]
    if content_type.endswith("json"):
        return _json(response.content)  # ``response.json()``, read by orjson where that gives the same value
    try:
        return response.json()
    except ValueError:
        return response.text


def _json(content: bytes) -> Any:
    """``json.loads(content)``, what httpx's ``Response.json`` does, read by orjson where that gives the same value
    (``llmplex.http.json_answer``)."""
    return json_value(content, orjson.loads)


def _request(
    client: OpenAI | AsyncOpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None
) -> Any:
    wire = _wire(client, path, method)
    http = client._client
    if http.cookies:  # cookies a server set on this client: let httpx add them, as for the SDK's request
        return http.build_request(
            "POST",
            wire.url,
            content=wire.body(payload),
            headers=wire.headers_for(timeout),
            timeout=client.timeout if timeout is None else timeout,
            extensions={**wire.extensions},  # what the SDK's request carries (openai 3.x's Azure key origin)
        )
    return wire.library.Request(
        "POST",
        wire.url,
        headers=wire.headers_for(timeout),
        content=wire.body(payload),
        extensions={**wire.extensions, "timeout": wire.timeouts(client.timeout if timeout is None else timeout)},
    )


@contextlib.contextmanager
def _sdk_errors(http: object, request: Any) -> Iterator[None]:
    """Transport failures as the SDK reports them (``_sdk_error``).

    ``request`` is the httpx ``Request``, or a function building it (called only on a failure).
    """
    try:
        yield
    except Exception as exc:
        _raise_sdk_error(http, exc, request)


def _sdk_error(http: object, exc: Exception, request: Any) -> Exception:
    """A transport failure as the SDK reports it: ``APITimeoutError``, else ``APIConnectionError``; the SDK's own
    errors as they are. ``request`` as for ``_sdk_errors``."""
    if isinstance(exc, http_library(http).TimeoutException):
        return openai.APITimeoutError(request=request() if callable(request) else request)
    if isinstance(exc, openai.OpenAIError):
        return exc
    return openai.APIConnectionError(request=request() if callable(request) else request)


def _raise_sdk_error(http: object, exc: Exception, request: Any) -> NoReturn:
    """Raise ``exc`` as the SDK reports it (``_sdk_error``), from ``exc``; ``exc`` itself when it is already so.
    What ``_sdk_errors`` does, called in a plain ``try`` where a generator's frame on every call would cost more."""
    error = _sdk_error(http, exc, request)
    if error is exc:
        raise exc
    raise error from exc


def post(client: OpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None) -> Any:
    """``POST path`` with ``payload`` as the body: the decoded JSON answer (``method`` is the SDK method it
    stands for, whose parameter order the body follows)."""
    request = _request(client, path, method, payload, timeout)
    http = client._client
    try:
        response = http.send(request)
    except Exception as exc:
        _raise_sdk_error(http, exc, request)
    return _decoded(client, response)


async def apost(
    client: AsyncOpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None
) -> Any:
    """Async ``post``; straight on the aiohttp session of an SDK client on its aiohttp transport
    (``llmplex.http.direct_sender``), the same request without httpx's objects."""
    http = client._client
    wire = _wire(client, path, method)
    sender = direct_sender(http) if not wire.extensions else None
    if sender is None:
        request = _request(client, path, method, payload, timeout)
        with _sdk_errors(http, request):
            response = await http.send(request)
        return _decoded(client, response)
    timeouts = wire.timeouts(client.timeout if timeout is None else timeout)
    headers = wire.headers if timeout is None else wire.headers_for(timeout)
    # a partial, not a closure: no cell for each of its arguments in this coroutine's frame while the call is in flight
    request_built = functools.partial(_request, client, path, method, payload, timeout)
    try:
        answer = await sender.post(wire.address, headers, wire.body(payload), timeouts, request_built)
    except Exception as exc:
        _raise_sdk_error(http, exc, request_built)
    return _decoded(client, answer)


def stream(
    client: OpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None
) -> Iterator[Any]:
    """``post`` of a streamed call: the decoded events, sent now; the response closes when they end or are closed."""
    request = _request(client, path, method, payload, timeout)
    http = client._client
    try:
        response = http.send(request, stream=True)
    except Exception as exc:
        _raise_sdk_error(http, exc, request)
    if response.status_code >= 400:
        try:
            response.read()
        finally:
            response.close()
        raise client._make_status_error_from_response(response) from None
    return _events(response)


async def astream(
    client: AsyncOpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None
) -> AsyncIterator[Any]:
    """Async ``stream``; straight on the aiohttp session of an SDK client on its aiohttp transport
    (``llmplex.http.direct_stream``), as ``apost``."""
    http = client._client
    wire = _wire(client, path, method)
    sender = direct_sender(http) if not wire.extensions else None
    response: Any
    if sender is None:
        request = _request(client, path, method, payload, timeout)
        with _sdk_errors(http, request):
            response = await http.send(request, stream=True)
    else:  # as ``apost``: the client's own timeouts and headers as the same objects, a partial, a plain try
        timeouts = wire.timeouts(client.timeout if timeout is None else timeout)
        headers = wire.headers if timeout is None else wire.headers_for(timeout)
        request_built = functools.partial(_request, client, path, method, payload, timeout)
        try:
            response = await open_stream(sender, wire.address, headers, wire.body(payload), timeouts, request_built)
        except Exception as exc:
            _raise_sdk_error(http, exc, request_built)
    if response.status_code >= 400:
        try:
            await response.aread()
        finally:
            await response.aclose()
        raise client._make_status_error_from_response(response) from None
    return _aevents(response)


def _events(response: Any) -> Iterator[Any]:
    done = False
    try:
        for sse in iter_sse(response.iter_bytes()):  # this loop runs for every chunk: ``_event``'s common case inline
            data = sse.data
            if done or data.startswith("[DONE]"):
                done = True  # what follows is skipped, as the SDK skips it; the body is read to its end
                continue
            event = orjson.loads(data)
            if type(event) is dict and not event.get("error"):
                yield event
            else:
                yield _event(event, response)
    finally:
        response.close()


async def _aevents(response: Any) -> AsyncIterator[Any]:
    done = False
    try:
        async for sse in aiter_sse(response.aiter_bytes()):  # as in ``_events``
            data = sse.data
            if done or data.startswith("[DONE]"):
                done = True
                continue
            event = orjson.loads(data)
            if type(event) is dict and not event.get("error"):
                yield event
            else:
                yield _event(event, response)
    finally:
        await response.aclose()


def _event(data: Any, response: Any) -> Any:
    """One event's decoded data, or the SDK's ``APIError`` for an error event (``openai.Stream.__stream__``)."""
    if isinstance(data, dict) and data.get("error"):
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else None
        if not message or not isinstance(message, str):
            message = "An error occurred during streaming"
        raise openai.APIError(message=message, request=response.request, body=error)
    return data
