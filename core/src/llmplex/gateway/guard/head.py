"""The HTTP protocol ``llmplex serve`` runs: uvicorn's httptools protocol with limits on what a request head costs.

``GuardedHttpToolsProtocol`` is the protocol class given to uvicorn (``http=``), with
its ``HeadLimits`` on the uvicorn config (``GuardedConfig``). While a request's head is parsed:

- its size (the URL plus every header name and value) past ``[gateway] max_header_bytes``,
  or more headers than ``max_header_count``, is answered 431 and the connection closed; bytes
  of a head still unparsed are counted too, so a never-ending header line holds at most
  twice the limit in memory;
- a head that has not arrived ``header_timeout`` seconds after the connection opened (or
  after the previous answer) is answered 408 and the connection closed, or just closed when
  not one byte of it came (slow-header clients cannot hold connections);
- a connection opened while ``max_connections`` were already open is answered 503 with
  ``Retry-After`` on its first request and closed; the connections already open keep being served.

None of these requests reaches the application. The answers are JSON in the OpenAI error
shape (the Anthropic shape for ``/v1/messages``).

An answer's head is written with its body's first bytes, in one ``transport.write`` (one ``send`` syscall)
instead of two (``_OneWrite``): a whole answer's with its body, a stream's with its first chunk when that is
written in the same step of the event loop (else on its own at the next step).

Every request's scope carries ``scope["extensions"][CONNECTION_LOST]["future"]``: a future of its connection,
done once the connection is lost, so that the application learns of a client that left without a task waiting on
``receive`` (a request's own task and the loop's steps for it).
"""

from __future__ import annotations

import asyncio
import http
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.wire import dumps

if TYPE_CHECKING:
    from llmplex.config.schema import GatewayConfig

__all__ = ["CONNECTION_LOST", "GuardedConfig", "GuardedHttpToolsProtocol", "HeadLimits"]

CONNECTION_LOST = "llmplex.connection_lost"
"""The ASGI scope extension whose ``"future"`` is done once the request's connection is lost."""


@dataclass(frozen=True)
class HeadLimits:
    """What a request head and the connections may cost (``[gateway]``'s values)."""

    max_header_bytes: int = 64 * 1024
    max_header_count: int = 100
    header_timeout: float = 10.0
    max_connections: int = 1000

    @classmethod
    def of(cls, settings: GatewayConfig) -> HeadLimits:
        """The limits ``settings`` give."""
        return cls(
            settings.max_header_bytes, settings.max_header_count, settings.header_timeout, settings.max_connections
        )


def refusal(status: int, error: GatewayError, anthropic: bool) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection: ``error`` as JSON."""
    body = dumps(error.body("anthropic" if anthropic else "openai"))
    head = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}", "content-type: application/json"]
    head += [f"{name}: {value}" for name, value in error.response_headers().items()]
    head += [f"content-length: {len(body)}", "connection: close", "", ""]
    return "\r\n".join(head).encode("ascii") + body


class GuardedConfig(uvicorn.Config):
    """uvicorn's ``Config`` carrying the ``HeadLimits`` (pickled with it to every worker process)."""

    def __init__(self, app: Any, head_limits: HeadLimits, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.head_limits = head_limits


class _OneWrite:
    """The transport of one request's response cycle: the answer's head is written with the body's first bytes
    in one ``write``. The head of an answer of known length (``content-length``, not ``HEAD``) waits for its
    body; a stream's head (chunked) for its first chunk written in the same step of the loop, else it is
    written on its own at the next step."""

    __slots__ = ("cycle", "head", "loop", "transport")

    def __init__(self, transport: asyncio.Transport, cycle: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self.cycle: Any = cycle  # until the head is written
        self.loop = loop
        self.head: bytes | None = None

    def write(self, data: bytes) -> None:
        cycle = self.cycle
        if cycle is not None and cycle.response_started:  # the head: the first write once the answer started
            self.cycle = None
            chunked = cycle.chunked_encoding
            if chunked is False and cycle.scope["method"] != "HEAD":
                self.head = data  # the body, written next (empty or not), takes it along
                return
            if chunked:
                self.head = data
                self.loop.call_soon(self.flush)  # a stream whose first chunk is not written in this step
                return
        elif self.head is not None:
            data, self.head = self.head + data, None
        self.transport.write(data)

    def flush(self) -> None:
        """Write the head still held, on its own."""
        if self.head is not None and not self.transport.is_closing():
            self.transport.write(self.head)
        self.head = None

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.flush()  # a head whose body never came: written, as uvicorn would have
        self.transport.close()


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol refusing heads past the limits and connections past the cap (see the module);
    the limits are its config's ``head_limits`` (a ``GuardedConfig``), else the defaults."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.limits: HeadLimits = getattr(config, "head_limits", None) or HeadLimits()
        # what the head being parsed may still add (URL and header bytes, exact; headers) before it is refused
        self._bytes_left = self.limits.max_header_bytes
        self._headers_left = self.limits.max_header_count
        self._unparsed = 0  # bytes received while a head was incomplete (an upper bound)
        self._in_body = False
        self._refused = False
        self._over_cap = False
        self._head_timer: asyncio.TimerHandle | None = None
        self._lost: asyncio.Future[None] = self.loop.create_future()  # the requests' CONNECTION_LOST

    # -- connection ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._over_cap = len(self.connections) > self.limits.max_connections
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)
        if not self._lost.done():
            self._lost.set_result(None)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if not self._in_body:
            self._unparsed += len(data)
            if self._unparsed > 2 * self.limits.max_header_bytes:
                self._refuse_head_size()
                return
        super().data_received(data)

    def on_response_complete(self) -> None:
        pipelined = bool(self.pipeline)  # a request already parsed is started next: its head has arrived
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._arm_head_timer()

    # -- parser callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._bytes_left, self._headers_left = self.limits.max_header_bytes, self.limits.max_header_count
        super().on_message_begin()
        self.scope.setdefault("extensions", {})[CONNECTION_LOST] = {"future": self._lost}

    def on_url(self, url: bytes) -> None:
        if self._refused:
            return
        self._bytes_left -= len(url)
        if self._bytes_left < 0:
            self._refuse_head_size()
            return
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._refused:
            return
        self._bytes_left -= len(name) + len(value) + 4  # counted down: no limit looked up for every header
        self._headers_left -= 1
        if self._bytes_left < 0 or self._headers_left < 0:
            self._refuse_head_size()
            return
        HttpToolsProtocol.on_header(self, name, value)  # not super(): it builds a proxy for every header

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._disarm_head_timer()
        self._in_body, self._unparsed = True, 0
        if self._over_cap:
            message = (
                f"the gateway has {self.limits.max_connections} connections open, its [gateway] max_connections; "
                "retry shortly"
            )
            self._refuse(503, GatewayError(503, message, code="too_many_connections", retry_after=1))
            return
        cycle = self.cycle
        super().on_headers_complete()
        if self.cycle is not cycle and self.cycle is not None:  # this request's cycle (not an upgrade's)
            self.cycle.transport = _OneWrite(self.transport, self.cycle, self.loop)  # type: ignore[assignment]

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._in_body, self._unparsed = False, 0
        super().on_message_complete()

    # -- refusing ---------------------------------------------------------------------

    def _refuse_head_size(self) -> None:
        message = (
            f"the request head is larger than this gateway accepts: at most {self.limits.max_header_bytes} bytes "
            f"of URL and headers ([gateway] max_header_bytes) in at most {self.limits.max_header_count} headers "
            "([gateway] max_header_count)"
        )
        self._refuse(431, GatewayError(431, message, code="request_header_fields_too_large"))

    def _head_too_slow(self) -> None:
        self._head_timer = None
        serving = self.cycle is not None and not self.cycle.response_complete
        if serving or self._refused or self.transport.is_closing():
            return
        if self._unparsed == 0:  # nothing of a head yet: close quietly (a client may be reusing an idle connection)
            self.transport.close()
            return
        message = f"the request head did not arrive within {self.limits.header_timeout:g} s ([gateway] header_timeout)"
        self._refuse(408, GatewayError(408, message, code="request_timeout"))

    def _refuse(self, status: int, error: GatewayError) -> None:
        self._refused = True
        self._disarm_head_timer()
        url = getattr(self, "url", b"") or b""
        if not self.transport.is_closing():
            self.transport.write(refusal(status, error, url.startswith(b"/v1/messages")))
            self.transport.close()
        self.logger.info("refused a request: %s %s", status, error.message)

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.limits.header_timeout, self._head_too_slow)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def send_400_response(self, msg: str) -> None:
        if not self._refused:
            super().send_400_response(msg)
