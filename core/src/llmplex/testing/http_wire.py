"""The conformance kit for HTTP plugins: a real local server, and an adapter for the provider's JSON.

Any plugin that talks HTTP (through an official SDK, httpx, aiohttp, ...) is
tested at the wire: the kit runs a ``WireServer``
on 127.0.0.1, points the plugin at it, scripts its answers (slow ones, stalls,
resets, streams, an HTML error page) and reads back what the plugin sent. The
only provider-specific part is a ``WireAdapter``, which the plugin's test
module writes from the provider's API reference::

    class EchoWire(WireAdapter):
        def response(self, reply): return {"id": reply.response_id, "text": reply.text, ...}
        def stream(self, reply): return [sse({"delta": word}) for word in ...]
        def error_body(self, error): return {"error": {"message": error.message}}
        def read_request(self, received): body = received.json(); return SentRequest(...)

    class TestEchoConformance(HTTPConformanceTests):
        prefix = "echo"
        model = "echo-1"
        wire = EchoWire()
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import pytest

from llmplex.client import Client
from llmplex.errors import LLMConfigurationError
from llmplex.testing.check_addresses import AddressChecks
from llmplex.testing.enforcement import check_subclass
from llmplex.testing.kit import ProviderConformanceTests
from llmplex.testing.observe import Observed
from llmplex.testing.replies import FakeError, Reply
from llmplex.testing.sent import SentRequest
from llmplex.testing.server import Answer, Received, WireServer

__all__ = ["BAD_GATEWAY_PAGE", "HTTPConformanceTests", "WireAdapter", "sse"]

BAD_GATEWAY_PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
"""What a proxy in front of the provider answers when the provider is down: HTML, not JSON."""


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: ``data`` (JSON-encoded unless it is text) with an optional ``event:`` name.

    Raises ``LLMConfigurationError`` for what no event stream can carry: an event name
    with a line break, or text with a lone surrogate (not encodable as UTF-8).
    """
    text = data if isinstance(data, str) else json.dumps(data)
    if event is not None and ("\n" in event or "\r" in event):
        raise LLMConfigurationError(f"sse(): the event name {event!r} holds a line break; give a one-line name")
    head = f"event: {event}\n" if event is not None else ""
    body = head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"
    try:
        return body.encode()
    except UnicodeEncodeError as exc:
        where = "the event name" if event is not None and _unencodable(event) else "the data"
        raise LLMConfigurationError(
            f"sse(): {where} holds a lone surrogate ({body[exc.start : exc.end]!r} at character {exc.start}), "
            "which UTF-8 cannot encode; pass text of whole characters"
        ) from None


def _unencodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


class WireAdapter:
    """How one provider's HTTP API says what the kit scripts, and how to read what was sent to it."""

    stream_content_type: ClassVar[str] = "text/event-stream"

    def response(self, reply: Reply) -> Any:
        """The JSON body of a successful, non-streamed answer carrying ``reply``."""
        raise NotImplementedError(f"{type(self).__name__} must implement response(reply)")

    def stream(self, reply: Reply) -> Sequence[bytes]:
        """The body of a streamed answer carrying ``reply``, chunk by chunk (see ``sse``).

        Stream text word by word, and give each tool call its own index. Only
        streaming providers need it.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement stream(reply)")

    def error_body(self, error: FakeError) -> Any:
        """The provider's JSON error body for ``error.kind``, carrying ``error.message``."""
        raise NotImplementedError(f"{type(self).__name__} must implement error_body(error)")

    def error_status(self, error: FakeError) -> int:
        """The HTTP status of ``error`` (override for the provider's own quota status)."""
        assert error.status is not None
        return error.status

    def read_request(self, received: Received) -> SentRequest:
        """What ``received`` asked for, in core's terms."""
        raise NotImplementedError(f"{type(self).__name__} must implement read_request(received)")


class HTTPConformanceTests(AddressChecks, ProviderConformanceTests):
    """The conformance kit over a real local HTTP server.

    Declare ``wire`` (your ``WireAdapter``) and, unless the plugin's endpoint
    setting is ``base_url`` taking the server's root URL plus ``base_path``,
    override ``server_settings``. ``server_settings`` is merged over ``settings``:
    a ``base_url`` in ``settings`` is allowed but the server's wins. The
    ``connection`` failure resets the connection, the ``timeout`` one stalls,
    ``bad_gateway`` answers ``BAD_GATEWAY_PAGE``. On top of the standard checks, a hostile model string
    must never leave the documented host and path (``AddressChecks``).
    """

    wire: ClassVar[WireAdapter]
    base_path: ClassVar[str] = ""
    """Appended to the server's URL for the ``base_url`` setting (``"/v1"``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_subclass(cls, HTTPConformanceTests)

    def server_settings(self, url: str) -> dict[str, Any]:
        """The settings pointing the plugin at the kit's server at ``url`` (``http://127.0.0.1:PORT``)."""
        return {"base_url": url + self.base_path}

    @pytest.fixture
    def transport(self) -> Iterator[WireServer]:
        """The kit's server."""
        with WireServer() as server:
            yield server

    @pytest.fixture
    def llm(self, observed: Observed, transport: WireServer) -> Client:
        """A client routing ``prefix`` to the plugin at the kit's server, with the kit's secret, without retries."""
        settings = {**self.provider_settings(), **self.server_settings(transport.url)}
        return Client(providers={self.prefix: settings}, throttle={"max_attempts": 1}, plugins=[observed])

    def fake_response(self, transport: WireServer, reply: Reply) -> None:
        transport.push(Answer.json(200, self.wire.response(reply), delay=reply.delay))

    def fake_stream(self, transport: WireServer, reply: Reply) -> None:
        if not self.supports_streaming:  # core answers a stream from one plain call
            self.fake_response(transport, reply)
            return
        chunks = self.wire.stream(reply)
        transport.push(Answer.stream(chunks, self.wire.stream_content_type, delay=reply.delay))

    def fake_error(self, transport: WireServer, error: FakeError) -> None:
        if error.kind == "connection":
            transport.push(Answer.reset())
        elif error.kind == "timeout":
            transport.push(Answer.stall(10 * 60))
        elif error.kind == "bad_gateway":
            transport.push(Answer.text(502, BAD_GATEWAY_PAGE, "text/html", error.headers()))
        else:
            transport.push(Answer.json(self.wire.error_status(error), self.wire.error_body(error), error.headers()))

    def fake_stall(self, transport: WireServer, seconds: float) -> None:
        transport.push(Answer.stall(seconds))

    def sent_payloads(self, transport: WireServer) -> Sequence[Any]:
        return [_decoded(r) for r in transport.received]

    def sent_requests(self, transport: WireServer) -> Sequence[SentRequest]:
        return [self.wire.read_request(r) for r in transport.received]


def _decoded(received: Received) -> Any:
    try:
        return received.json()
    except ValueError:
        return received.body.decode("utf-8", "replace")
