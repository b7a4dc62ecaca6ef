"""``generate_content_stream`` without the SDK's pydantic models: the SDK's request, read as plain data.

The request is the one the SDK would send, written without its models
(``generate.prepare``: the URL with ``?alt=sse`` from its API client's
``_build_request``, ``x-goog-api-key``, ``user-agent``, ``x-goog-api-client``,
the server timeout header, the JSON body byte for byte as ``wire.body`` writes
it), sent through the SDK client's own deadline-bound ``httpx2`` client with
the arguments the SDK gives it. What changes is the reading: the event stream is read with
``llmplex.http.iter_sse``/``aiter_sse`` and each event decoded with orjson; a
common chunk (text, thoughts, token counts) is read in one walk and handed on
as that reading (``chunks.text_chunk``: its text events built), another chunk
the parser can read as it is (``chunks.is_plain``) as its plain ``dict``, and
any other is built into the SDK's ``GenerateContentResponse`` as the SDK
builds it. Failures are the SDK's: an error status is
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
Gemini API key, ``httpx2``) and payloads ``generate.prepare`` writes, with
automatic function calling off when there are tools, qualify (``prepare``);
everything else, Vertex AI's clients included, goes through the SDK. The SDK's
request model is built only for what needs it: a chunk the parser does not read
as it is, and a request that goes on from a continuation token.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import orjson
from google.genai import _api_client, errors, types

from llmplex.http import aiter_sse, iter_sse
from llmplex_gemini import continuation, generate
from llmplex_gemini.chunks import is_plain, sdk_chunk, text_chunk
from llmplex_gemini.generate import LeanCall

__all__ = ["LeanStream", "prepare"]

_END = b"\n\n"
"""Fed after a body that ended cleanly: the SDK's reader still reads an event left without its blank line."""


@dataclass
class LeanStream:
    """One prepared ``streamGenerateContent`` call."""

    call: LeanCall

    @property
    def request(self) -> httpx2.Request:
        """The ``httpx2.Request`` the call sends (its headers hold the API key: never in the repr)."""
        return self.call.request()

    @functools.cached_property
    def parameters(self) -> Any:
        """The SDK's request model of the call (for the SDK's chunk models and continuation), its config never
        ``None`` (the SDK's stream reads one)."""
        arguments = self.call.arguments
        config = types.GenerateContentConfig.model_validate(arguments.get("config") or {})
        return types._GenerateContentParameters(model=arguments["model"], contents=arguments["contents"], config=config)

    def open(self) -> Iterator[Any]:
        """Send now (sync client); the chunks follow, the response closed when they end or are closed."""
        http = self.call.endpoint.http
        assert isinstance(http, httpx2.Client)
        response = http.send(self.request, stream=True)
        try:
            errors.APIError.raise_for_response(response)
        except BaseException:
            response.close()
            raise
        return self._chunks(response)

    async def aopen(self) -> AsyncIterator[Any]:
        """Async twin of ``open``."""
        http = self.call.endpoint.http
        assert isinstance(http, httpx2.AsyncClient)
        response = await http.send(self.request, stream=True)
        try:
            await errors.APIError.raise_for_async_response(response)
        except BaseException:
            await response.aclose()
            raise
        return self._achunks(response)

    def _chunks(self, response: httpx2.Response) -> Iterator[Any]:
        hop = continuation.Hop(self.call.continues)
        observe, record, read = hop.observe, hop.record, self._chunk
        try:
            for sse in iter_sse(_ended(response.iter_bytes())):  # runs for every chunk: the common one read here
                try:
                    chunk = _loads(sse.data)
                except JSONDecodeError:
                    chunk = _decoded(sse.data)
                text = text_chunk(chunk)  # the common chunk, read once: recorded as ``observe`` would
                if text is not None:
                    record(text[3], text[4])  # its usage and finish reason
                    yield text
                else:
                    yield observe(read(chunk, response))
        except Exception:
            if not (hop.token and hop.resumable):  # else, as the SDK's stream, go on from the token
                raise
        finally:
            response.close()
        if hop.token and hop.resumable:
            yield from continuation.rest(self.call.client, self.parameters, hop)

    async def _achunks(self, response: httpx2.Response) -> AsyncIterator[Any]:
        hop = continuation.Hop(self.call.continues)
        observe, record, read = hop.observe, hop.record, self._chunk
        try:
            async for sse in aiter_sse(_aended(response.aiter_bytes())):  # as in ``_chunks``
                try:
                    chunk = _loads(sse.data)
                except JSONDecodeError:
                    chunk = _decoded(sse.data)
                text = text_chunk(chunk)  # the common chunk, read once: recorded as ``observe`` would
                if text is not None:
                    record(text[3], text[4])  # its usage and finish reason
                    yield text
                else:
                    yield observe(read(chunk, response))
        except Exception:
            if not (hop.token and hop.resumable):
                raise
        finally:
            await response.aclose()
        if hop.token and hop.resumable:
            async for chunk in continuation.arest(self.call.client, self.parameters, hop):
                yield chunk

    def _chunk(self, chunk: Any, response: httpx2.Response) -> Any:
        """One decoded event (not the common plain chunk) as ``request_streamed`` and ``_generate_content_stream``
        read it: its error raised, else plain data the parser reads, else the SDK's model."""
        if type(chunk) is dict and next(iter(chunk), None) == "error":  # the SDK's '{"error":' prefix test
            errors.APIError.raise_error(
                chunk.get("error", {}).get("code"), chunk, _api_client.HttpResponse(response.headers, response)
            )
        if is_plain(chunk):
            return chunk
        return sdk_chunk(chunk, self.parameters, response.headers)


_loads, JSONDecodeError = orjson.loads, orjson.JSONDecodeError


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


def prepare(client: Any, payload: dict[str, Any], *, is_async: bool) -> LeanStream | None:
    """The lean call for ``generate_content_stream(**payload)`` on ``client``, when it sends what the SDK sends
    and reads its answer the same way; ``None``: use the SDK."""
    config = payload.get("config") or {}
    if config.get("tools") and config.get("automatic_function_calling") != {"disable": True}:
        return None  # the SDK may run a tool itself
    call = generate.prepare(client, payload, is_async=is_async, stream=True)
    return None if call is None else LeanStream(call)
