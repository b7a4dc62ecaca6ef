"""``generate_content`` without the SDK's pydantic models: the same HTTP request, the answer read as plain data.

For the clients this plugin builds (``endpoint.endpoint``) and a payload
``wire.body`` writes byte for byte as the SDK would, ``prepare`` returns a
``LeanCall`` that sends the SDK's request (``Endpoint.request``: URL, headers,
timeout, body) through the SDK client's own deadline-bound ``httpx2`` client,
as ``BaseApiClient._request_once``/``_async_request_once`` send it; async, when
that client's aiohttp transport allows it, straight on its aiohttp session
(``llmplex.http.direct_sender``: the same headers, timeouts capped at the
deadline, the transport's exceptions). The answer
is checked by the SDK's ``APIError.raise_for_response``/``raise_for_async_response``
(its ``ClientError``/``ServerError``), decoded with orjson (the stdlib's
``json.loads`` of the text when orjson refuses it, which raises what the SDK's
reading raises) and handed on as that ``dict`` when the parser reads it as it is
(``chunks.is_plain``); any other answer becomes the SDK's
``GenerateContentResponse``, built as the SDK builds it, and an answer that ends
resumable (a ``continuationToken``) is followed by the SDK's own requests and
merged as ``generate_content`` merges them. Transport failures are ``httpx2``'s,
as the SDK lets them through. Everything else goes through the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import orjson
from google import genai
from google.genai import _extra_utils, errors, types

from llmplex.http import Reply, direct_sender
from llmplex_gemini import wire
from llmplex_gemini.chunks import is_plain, sdk_chunk
from llmplex_gemini.endpoint import Endpoint, endpoint

__all__ = ["LeanCall", "prepare"]


@dataclass(eq=False, slots=True)
class LeanCall:
    """One prepared ``generateContent`` call (not to be changed: not frozen, as a frozen dataclass's fields are set
    one ``object.__setattr__`` at a time, on every call)."""

    client: genai.Client
    endpoint: Endpoint = field(repr=False)
    url: str
    body: bytes = field(repr=False)
    timeout: int | None
    arguments: dict[str, Any] = field(repr=False)
    """The SDK's keyword arguments, for an answer the SDK's models must read."""

    def send(self) -> Any:
        """The answer (sync client): plain data, or the SDK's model."""
        http = self.endpoint.http
        assert isinstance(http, httpx2.Client)
        response = http.send(self.endpoint.request(self.url, self.body, self.timeout))
        errors.APIError.raise_for_response(response)
        answer = self._answer(response.content, lambda: response)
        token = self._token(answer)
        if token is None:
            return answer
        config = self._config()
        responses = [answer]
        while token:  # the SDK's ``_generate_content_with_continuation``, from the second request on
            call_config = _extra_utils.prepare_continuation_config(config, token)
            answer = self.client.models._generate_content(**{**self._sdk_arguments(), "config": call_config})
            responses.append(answer)
            token = _extra_utils.should_continue_generation(answer)
        return _extra_utils.merge_continuation_responses(responses, config=config)

    async def asend(self) -> Any:
        """Async twin of ``send``; straight on the aiohttp session of the client's transport
        (``llmplex.http.direct_sender``) when it allows it, the same request without httpx2's objects."""
        http = self.endpoint.http
        assert isinstance(http, httpx2.AsyncClient)
        direct = direct_sender(http)
        sent: httpx2.Response | Reply
        if direct is None:
            sent = await http.send(self.endpoint.request(self.url, self.body, self.timeout))
        else:
            headers, timeouts = self.endpoint.sent(self.timeout)
            sent = await direct.post(self.url, headers, self.body, timeouts, self.request)
        if isinstance(sent, Reply):  # a 2xx answer, read whole
            answer = self._answer(sent.content, sent.response)
        else:
            await errors.APIError.raise_for_async_response(sent)
            answer = self._answer(sent.content, lambda: sent)
        token = self._token(answer)
        if token is None:
            return answer
        config = self._config()
        responses = [answer]
        while token:
            call_config = _extra_utils.prepare_continuation_config(config, token)
            answer = await self.client.aio.models._generate_content(**{**self._sdk_arguments(), "config": call_config})
            responses.append(answer)
            token = _extra_utils.should_continue_generation(answer)
        return _extra_utils.merge_continuation_responses(responses, config=config)

    @property
    def continues(self) -> bool:
        """Whether the SDK follows continuation tokens for this call (unless the config turns it off)."""
        return (self.arguments.get("config") or {}).get("automatic_continuation") is not False

    def _token(self, answer: Any) -> bytes | None:
        """The continuation token the SDK would send the next request with (a plain answer has none)."""
        if type(answer) is dict or not self.continues:
            return None
        return _extra_utils.should_continue_generation(answer)

    def request(self) -> httpx2.Request:
        """The ``httpx2.Request`` of this call, as the SDK builds it."""
        return self.endpoint.request(self.url, self.body, self.timeout)

    def _answer(self, content: bytes, response: Callable[[], httpx2.Response]) -> Any:
        """The answer as ``Models._generate_content`` reads it: plain data the parser reads, else its model
        (``response`` gives the ``httpx2.Response``, read, for what only it has)."""
        try:
            answer = orjson.loads(content) if content else {}
        except orjson.JSONDecodeError:
            answer = json.loads(response().text)  # the SDK's reading: takes NaN, else raises its error
        if is_plain(answer):
            return answer
        return sdk_chunk(answer, self._parameters(), response().headers)

    def _config(self) -> types.GenerateContentConfig | None:
        config = self.arguments.get("config")
        return None if config is None else types.GenerateContentConfig.model_validate(config)

    def _sdk_arguments(self) -> dict[str, Any]:
        return {"model": self.arguments["model"], "contents": self.arguments["contents"], "config": self._config()}

    def _parameters(self) -> Any:
        return types._GenerateContentParameters(**self._sdk_arguments())


def prepare(client: Any, arguments: dict[str, Any], *, is_async: bool, stream: bool = False) -> LeanCall | None:
    """The lean call for ``generate_content(**arguments)`` on ``client`` (``stream``: its
    ``generate_content_stream``'s request), when it sends what the SDK sends; ``None``: use the SDK."""
    found = endpoint(client, is_async=is_async)
    model = arguments.get("model")
    if found is None or type(model) is not str:
        return None
    plain, timeout = wire.lean_config(arguments.get("config"))
    body = wire.body(arguments) if plain else None
    url = found.url(model, stream=stream) if body is not None else None
    if url is None or body is None:
        return None
    return LeanCall(client, found, url, body, timeout, arguments)
