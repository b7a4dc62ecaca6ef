"""``generate_content_stream`` without a pydantic model per chunk: the SDK's request, read as plain data.

The request is the SDK's own: the payload goes through the SDK's request model
and converter (given the model's fields as a ``dict``, which it reads at half
the cost of the model) and its API client's ``_build_request`` (URL with ``?alt=sse``,
``x-goog-api-key``, ``user-agent``, ``x-goog-api-client``, the server timeout
header, the JSON body as it serializes it), and is sent through the SDK
client's own deadline-bound ``httpx2`` client with the arguments the SDK gives
it. What changes is the reading: the event stream is read with
``llmplex.http.iter_sse``/``aiter_sse`` and each event decoded with orjson; a
chunk the parser can read as it is (``chunks.is_plain``) is handed on as that
plain ``dict``, any other is built into the SDK's ``GenerateContentResponse``
as the SDK builds it. Failures are the SDK's: an error status is
``APIError.raise_for_response``'s ``ClientError``/``ServerError``, an
``{"error": ...}`` event is ``APIError.raise_error``'s, data that is not JSON is
``UnknownApiResponseError`` with the SDK's message, and transport failures (a
reset, a cut, the read timeout) are ``httpx2``'s, as the SDK lets them through.
Like the SDK's reader, an event the body ended without a blank line after is
still read (so a truncated one fails as not JSON). The response is closed on
every exit. A request that ends resumable (a ``continuationToken``, see
``llmplex_gemini.continuation``) is followed, as the SDK's stream follows it,
by the SDK's own stream from that token on.

Only clients this plugin built (``clients.create_client``/``create_async_client``,
Gemini API key, ``httpx2``) and calls that make one request with no tool the SDK
would run qualify (``prepare``); everything else, Vertex AI's clients included,
goes through the SDK.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx2
import orjson
from google import genai
from google.genai import _api_client, _common, errors, models, types

from llmplex.http import aiter_sse, iter_sse
from llmplex_gemini import continuation
from llmplex_gemini.chunks import is_plain, sdk_chunk
from llmplex_gemini.clients import lean_capable

__all__ = ["LeanStream", "prepare"]

_END = b"\n\n"
"""Fed after a body that ended cleanly: the SDK's reader still reads an event left without its blank line."""


@dataclass(frozen=True)
class LeanStream:
    """One prepared ``streamGenerateContent`` call: the SDK's request and request model."""

    client: genai.Client
    request: _api_client.HttpRequest = field(repr=False)  # its headers hold the API key
    parameters: Any = field(repr=False)

    def _build(self, http: httpx2.Client | httpx2.AsyncClient, *, is_async: bool) -> httpx2.Request:
        data = json.dumps(self.request.data).encode() if self.request.data else None  # the SDK's serialization
        api = self.client._api_client
        return http.build_request(
            method=self.request.method,
            url=api._httpx_url(self.request.url, is_async=is_async),
            content=data,
            headers=self.request.headers,
            timeout=self.request.timeout,
        )

    def open(self) -> Iterator[Any]:
        """Send now (sync client); the chunks follow, the response closed when they end or are closed."""
        http = self.client._api_client._httpx_client
        assert isinstance(http, httpx2.Client)
        response = http.send(self._build(http, is_async=False), stream=True)
        try:
            errors.APIError.raise_for_response(response)
        except BaseException:
            response.close()
            raise
        return self._chunks(response)

    async def aopen(self) -> AsyncIterator[Any]:
        """Async twin of ``open``."""
        http = self.client._api_client._async_httpx_client
        assert isinstance(http, httpx2.AsyncClient)
        response = await http.send(self._build(http, is_async=True), stream=True)
        try:
            await errors.APIError.raise_for_async_response(response)
        except BaseException:
            await response.aclose()
            raise
        return self._achunks(response)

    def _chunks(self, response: httpx2.Response) -> Iterator[Any]:
        hop = continuation.Hop(continuation.enabled(self.parameters.config))
        try:
            for sse in iter_sse(_ended(response.iter_bytes())):
                yield hop.observe(self._chunk(sse.data, response))
        except Exception:
            if not hop.resumable:  # else, as the SDK's stream, go on from the token
                raise
        finally:
            response.close()
        if hop.resumable:
            yield from continuation.rest(self.client, self.parameters, hop)

    async def _achunks(self, response: httpx2.Response) -> AsyncIterator[Any]:
        hop = continuation.Hop(continuation.enabled(self.parameters.config))
        try:
            async for sse in aiter_sse(_aended(response.aiter_bytes())):
                yield hop.observe(self._chunk(sse.data, response))
        except Exception:
            if not hop.resumable:
                raise
        finally:
            await response.aclose()
        if hop.resumable:
            async for chunk in continuation.arest(self.client, self.parameters, hop):
                yield chunk

    def _chunk(self, data: str, response: httpx2.Response) -> Any:
        """One event as ``request_streamed`` and ``_generate_content_stream`` read it: its error raised, else
        plain data the parser reads, else the SDK's model."""
        chunk = _decoded(data)
        if type(chunk) is dict and next(iter(chunk), None) == "error":  # the SDK's '{"error":' prefix test
            errors.APIError.raise_error(
                chunk.get("error", {}).get("code"), chunk, _api_client.HttpResponse(response.headers, response)
            )
        if is_plain(chunk):
            return chunk
        return sdk_chunk(chunk, self.parameters, response.headers)


def _decoded(data: str) -> Any:
    """orjson's reading, else the stdlib's (which the SDK uses: it takes ``NaN``), else the SDK's error."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data)
    except json.JSONDecodeError as error:
        raise errors.UnknownApiResponseError(f"Failed to parse response as JSON. Raw response: {data}") from error


def _ended(chunks: Iterable[bytes]) -> Iterator[bytes]:
    yield from chunks
    yield _END


async def _aended(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        yield chunk
    yield _END


def _one_plain_request(config: types.GenerateContentConfig) -> bool:
    """No tool the SDK would call itself, no raw response asked for (the SDK refuses it in a stream), and per-call
    HTTP options that only set the timeout."""
    calling = config.automatic_function_calling
    if config.should_return_http_response or (config.tools and not (calling is not None and calling.disable)):
        return False
    options = config.http_options
    return options is None or options.model_fields_set <= {"timeout"}


def prepare(client: Any, payload: dict[str, Any], *, is_async: bool) -> LeanStream | None:
    """The lean call for ``generate_content_stream(**payload)`` on ``client``, when it sends what the SDK sends
    and reads its answer the same way; ``None``: use the SDK."""
    if not lean_capable(client, is_async=is_async):
        return None
    config = types.GenerateContentConfig.model_validate(payload.get("config") or {})
    if not _one_plain_request(config):
        return None
    parameters = types._GenerateContentParameters(model=payload["model"], contents=payload["contents"], config=config)
    api = client._api_client
    plain = parameters.model_dump(exclude_none=True)  # the converter reads a dict of the model at half the cost
    request = models._GenerateContentParameters_to_mldev(api, plain, None, plain)
    url = request.get("_url")
    path = "{model}:streamGenerateContent?alt=sse".format_map(url) if url else "{model}:streamGenerateContent?alt=sse"
    query = request.get("_query")
    if query:
        path = f"{path}?{urlencode(query)}"
    request.pop("config", None)
    body = _common.encode_unserializable_types(_common.convert_to_dict(request))
    return LeanStream(client, api._build_request("post", path, body, config.http_options), parameters)
