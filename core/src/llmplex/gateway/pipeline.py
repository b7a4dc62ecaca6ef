"""One request's way through the gateway: authenticate, read, translate, admit, call, answer, record.

The order is fixed and every request of every API takes it (after the HTTP protocol's and the ``Door``'s
checks of ``gateway.guard``):

1. ``Authenticator.authenticate`` names the caller from its key (401; the body is not read, the
   connection is closed);
2. the body is read, refused past ``[gateway] max_body_bytes`` (413);
3. the API's translation validates the body into a ``CallSpec`` (400);
4. ``Authenticator.admit`` lets the call in or refuses it (403, 429) — nothing
   has been sent to any provider before this point;
5. ``llmplex.Client`` makes the call (routing, retries, fallbacks, limits);
6. the answer is sent whole or streamed; a client that leaves cancels the call;
7. a ``RequestRecord`` goes to the metrics and to every ``Recorder``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from llmplex.client import Client
from llmplex.config.schema import GatewayConfig
from llmplex.errors import LLMError
from llmplex.gateway.calls import CallSpec, StreamEncoder
from llmplex.gateway.errors import Dialect, GatewayError, from_llm_error
from llmplex.gateway.exchange import Exchange, exchange_record, new_request_id
from llmplex.gateway.guard.door import credential_presented
from llmplex.gateway.guard.head import CONNECTION_LOST
from llmplex.gateway.keys.access import Admission, Authenticator, Caller, CallTicket
from llmplex.gateway.keys.budget import reserved_nano
from llmplex.gateway.keys.owners import ResponseOwners
from llmplex.gateway.ops.metrics import Metrics
from llmplex.gateway.records import Recorder, RequestRecord
from llmplex.gateway.spend.estimate import StreamProgress, worst_case_usd
from llmplex.gateway.spend.journal import SpendJournal
from llmplex.gateway.streaming import stream_response
from llmplex.gateway.wire import dumps
from llmplex.types import Response as LLMResponse

__all__ = ["Exchange", "Pipeline", "upstream_error"]

log = logging.getLogger("llmplex.gateway")
_JSON = "application/json"
_STREAM_HEAD = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)
"""The headers every stream's answer starts with, encoded once (the request's own follow them)."""


class _Recorded(Response):
    """A JSON answer whose row is journaled before it is sent (``journal``), and whose exchange is recorded
    (metrics, settlement, access log) once it is sent or its sending failed: not part of the client's wait."""

    def __init__(
        self,
        body: bytes,
        status: int,
        headers: dict[str, str],
        record: Callable[[], None],
        journal: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(body, status, headers, media_type=_JSON)
        self._record = record
        self._journal = journal

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        try:
            await self._journal()
            await super().__call__(scope, receive, send)
        finally:
            self._record()


class Pipeline:
    """The request pipeline over one ``Client``; the API translations call ``run``."""

    def __init__(
        self,
        client: Client,
        settings: GatewayConfig,
        authenticator: Authenticator,
        recorders: Sequence[Recorder] = (),
        metrics: Metrics | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.authenticator = authenticator
        self.recorders = list(recorders)
        self.metrics = metrics
        self.owners: ResponseOwners | None = None  # who owns the response ids handed out (keyed gateways)
        self.journal: SpendJournal | None = None  # where rows go before the answer's last byte

    # -- the steps -------------------------------------------------------------------

    def begin(self, endpoint: str, dialect: Dialect) -> Exchange:
        """A new exchange, counted in flight."""
        if self.metrics is not None:
            self.metrics.gauge(endpoint).inc()
        return Exchange(new_request_id(), endpoint, dialect, time.perf_counter(), time.time())

    async def read_body(self, request: Request) -> bytes:
        """The request body, or a 413 once it is longer than the limit (the rest is not read)."""
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        # the server's messages read here, not through Request.stream (an async generator): a body that came
        # whole (nearly every request's) is the first message's bytes, handed on as they are
        receive = request.receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "http.disconnect":
                raise ConnectionError("the client disconnected before the body ended")
            if kind != "http.request":
                continue
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunk if len(chunks) == 1 else b"".join(chunks)

    async def authenticate(self, exchange: Exchange, request: Request) -> Caller:
        """The caller (step 2)."""
        exchange.caller = await self.authenticator.authenticate(credential_presented(request))
        return exchange.caller

    async def admit(self, exchange: Exchange, spec: CallSpec) -> Admission:
        """Step 4: the authenticator's decision on this call (a 503 first when its row could not be journaled,
        a 404 when it continues provider-side state its key does not own)."""
        assert exchange.caller is not None
        exchange.model = spec.model
        exchange.stream = spec.stream
        exchange.spec = spec
        if self.journal is not None:
            self.journal.check()
        previous = spec.kwargs.get("previous_response_id")
        if self.owners is not None and isinstance(previous, str):
            await self.owners.check(exchange.caller, previous)
        estimate = sum(len(m.text) for m in spec.messages) // 4
        worst = self._worst_case(exchange, spec)
        ticket = CallTicket(exchange.endpoint, spec.model, spec.stream, estimate, worst_case_usd=worst)
        return await self.authenticator.admit(exchange.caller, ticket)

    def _worst_case(self, exchange: Exchange, spec: CallSpec) -> Decimal | None:
        """What the call may cost at most, for a caller whose key has a budget (``None`` otherwise)."""
        record = getattr(exchange.caller, "record", None)
        if getattr(record, "budget_usd", None) is None or exchange.endpoint == "embeddings":
            return None
        from llmplex.gateway.keys.unpriced import unpriced_rates

        route = self.client.route(spec.model)
        unpriced = unpriced_rates(self.client.config.budget)
        return worst_case_usd(route.provider.info.name, route.model, spec.messages, spec.kwargs, unpriced)

    # -- answering -------------------------------------------------------------------

    def headers(self, exchange: Exchange, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The headers of every answer: the request id and the gateway's own time so far."""
        overhead_ms = exchange.overhead(time.perf_counter()) * 1000
        headers = {"x-request-id": exchange.request_id, "x-llmplex-overhead-ms": f"{overhead_ms:.3f}"}
        reserved = reserved_nano.get()
        if reserved is not None:  # what admission held on the key's budget for this request
            headers["x-llmplex-budget-reserved-usd"] = f"{reserved / 1e9:.9f}"
        if extra:
            headers.update(extra)
        return headers

    def answer(
        self, exchange: Exchange, body: Any, answer: LLMResponse | None, extra: dict[str, str] | None = None
    ) -> Response:
        """The JSON answer of a successful exchange with the gateway's headers, recorded (``finish``) once sent."""
        headers = self.headers(exchange, extra)
        return _Recorded(
            dumps(body),
            200,
            headers,
            lambda: self.finish(exchange, 200, None, answer),
            lambda: self.conclude(exchange, 200, None, answer),
        )

    def fail(self, exchange: Exchange, error: GatewayError) -> Response:
        """The error answer in the exchange's API shape; the request is recorded as failed once it is sent."""
        headers = self.headers(exchange, error.response_headers())
        body = dumps(error.body(exchange.dialect))
        return _Recorded(
            body,
            error.status,
            headers,
            lambda: self.finish(exchange, error.status, error, None),
            lambda: self.conclude(exchange, error.status, error, None),
        )

    async def conclude(
        self, exchange: Exchange, status: int, error: GatewayError | None, answer: LLMResponse | None
    ) -> None:
        """Before the answer's last byte: journal the exchange's row and settle what it held (``settle``)."""
        record = self.journal_row(exchange, status, error, answer)
        if record is None:
            return
        for recorder in self.recorders:
            settle = getattr(recorder, "settle", None)
            if settle is None:
                continue
            try:
                await settle(record)
            except Exception:  # a broken recorder never fails a request that was answered
                log.exception("recorder %r failed to settle %s", recorder, exchange.request_id)

    def journal_row(
        self, exchange: Exchange, status: int, error: GatewayError | None, answer: LLMResponse | None
    ) -> RequestRecord | None:
        """Journal the exchange's row (once), before its answer's last byte goes out; the record journaled."""
        if exchange.journaled:
            return None
        exchange.journaled = True
        record = self._record(exchange, status, error, answer, time.perf_counter())
        exchange.journaled_as = (status, error, answer, record)
        for recorder in self.recorders:
            journal = getattr(recorder, "journal", None)
            if journal is None:
                continue
            try:
                journal(record)
            except Exception:  # a broken recorder never fails a request that was answered
                log.exception("recorder %r failed to journal %s", recorder, exchange.request_id)
        return record

    def finish(self, exchange: Exchange, status: int, error: GatewayError | None, answer: LLMResponse | None) -> None:
        """Record the finished exchange (step 7): its row (unless journaled already), metrics, recorders, log."""
        end = time.perf_counter()
        self.journal_row(exchange, status, error, answer)
        journaled = exchange.journaled_as
        if journaled is not None and journaled[:3] == (status, error, answer):  # the same outcome: priced once
            record = journaled[3].lasting(end - exchange.arrived)
        else:
            record = self._record(exchange, status, error, answer, end)
        if self.metrics is not None:
            self.metrics.gauge(exchange.endpoint).dec()
            self.metrics.observe(record, exchange.overhead(end))
        for recorder in self.recorders:
            try:
                recorder.record(record)
            except Exception:  # a broken recorder never fails a request that was answered
                log.exception("recorder %r failed on %s", recorder, exchange.request_id)
        if not log.isEnabledFor(logging.INFO):
            return
        # the access line's record made directly: Logger.info would also look up its caller's frame, which no
        # gateway log line shows (its handlers and filters, the secrets' masking included, still run)
        line = {
            "request_id": exchange.request_id,
            "endpoint": exchange.endpoint,
            "key": record.key_name,
            "model": record.model_asked,
            "status": status,
            "error_type": record.error_type,
            "latency_ms": round(record.latency * 1000, 3),
            "stream": exchange.stream,
        }
        log.handle(log.makeRecord(log.name, logging.INFO, __file__, 0, "request", (), None, extra=line))

    def _record(
        self, exchange: Exchange, status: int, error: GatewayError | None, answer: LLMResponse | None, end: float
    ) -> RequestRecord:
        return exchange_record(self.client, exchange, status, error, answer, end)

    # -- calls -----------------------------------------------------------------------

    async def complete(self, exchange: Exchange, request: Request, spec: CallSpec, admission: Admission) -> LLMResponse:
        """The whole answer; cancelled (``ConnectionError``) when the client leaves first."""
        kwargs = {**spec.kwargs, **admission.call_args}
        exchange.called = time.perf_counter()
        # the call runs in the request's own task (no task of its own and no asyncio.wait for one of two); a
        # watcher cancels it when the client leaves first
        watcher = _Watcher(asyncio.current_task(), request)
        try:
            answer = await self.client.acomplete(spec.model, spec.messages, **kwargs)
        except BaseException as exc:
            watcher.left_before()  # the client left: a ConnectionError; another's cancellation stays one
            exchange.answered = time.perf_counter()
            if isinstance(exc, LLMError):
                raise upstream_error(exc, exchange.dialect) from None
            raise
        watcher.left_before()  # a call that swallowed the watcher's cancellation is answered to nobody
        exchange.answered = time.perf_counter()
        await self._remember(exchange, answer.response_id)
        return answer

    async def _remember(self, exchange: Exchange, response_id: str | None) -> None:
        """Record who owns a response id handed out by the Responses API, before the answer naming it is sent."""
        if self.owners is not None and response_id and exchange.endpoint == "responses" and exchange.caller:
            await self.owners.remember(exchange.caller, response_id)

    def stream(
        self,
        exchange: Exchange,
        request: Request,
        spec: CallSpec,
        admission: Admission,
        encoder: StreamEncoder,
        extra: dict[str, str] | None = None,
    ) -> Response:
        """The streamed answer: SSE events as the provider sends them; ``extra`` headers on it."""
        kwargs = {**spec.kwargs, **admission.call_args}
        final: list[LLMResponse] = []

        async def chunks() -> AsyncIterator[bytes]:
            exchange.called = time.perf_counter()
            progress = exchange.progress = StreamProgress()
            owned = None
            try:
                # ``Client.astream``'s call, kept: what its provider reported so far is read there if the stream
                # is cut (the gateway's tools are JSON declarations, never MCP servers to list first)
                call = exchange.call = self.client.stream_call(spec.model, spec.messages, **kwargs)
                async for event in call.astream():
                    progress.see(event)
                    if event.response_id and event.response_id != owned:
                        owned = event.response_id
                        await self._remember(exchange, owned)
                    if event.type == "response" and event.response is not None:
                        final.append(event.response)
                        exchange.answered = time.perf_counter()
                        await self._remember(exchange, event.response.response_id)
                        await self.conclude(exchange, 200, None, event.response)  # before its last bytes
                    yield encoder.encode(event)
            except LLMError as exc:
                error = upstream_error(exc, exchange.dialect)
                if progress.events:  # cut after it began: its row (charged what it used) before the error event
                    await self.conclude(exchange, 200, error, None)
                raise error from None
            except GatewayError:
                raise
            except Exception:  # the gateway's own step failed (an owners store, an encoder): a typed 500, logged
                log.exception("unexpected failure of %s's stream", exchange.request_id)
                raise GatewayError(500, "internal gateway error", kind="internal") from None

        return _EventStream(self, exchange, chunks(), encoder, final, extra)


def upstream_error(error: LLMError, dialect: Dialect) -> GatewayError:
    """The gateway's answer to a failed provider call, naming the provider that failed."""
    answer = from_llm_error(error, dialect)
    answer.provider, answer.model = error.provider, error.model
    return answer


def _connection_lost(scope: Any) -> asyncio.Future[None] | None:
    """The future of the request's connection, done once it is lost, where the server gives one
    (``CONNECTION_LOST``: ``llmplex serve``'s protocol)."""
    extension = scope.get("extensions", {}).get(CONNECTION_LOST)
    return extension["future"] if extension else None


class _Watcher:
    """Cancels ``task`` (a request's, during its upstream call) when its client disconnects: told by the
    connection's ``CONNECTION_LOST`` future where the server gives one (``llmplex serve``'s protocol), else
    by a task waiting on ``receive`` for ``http.disconnect``."""

    __slots__ = ("left", "lost", "task", "watching")

    def __init__(self, task: asyncio.Task[Any] | None, request: Request) -> None:
        self.task = task
        self.left = False
        self.lost = _connection_lost(request.scope)
        self.watching: asyncio.Future[None] | None = None
        if self.lost is not None:
            self.lost.add_done_callback(self._leave)
        else:
            self.watching = asyncio.ensure_future(self._watch(request.receive))

    async def _watch(self, receive: Callable[[], Awaitable[MutableMapping[str, Any]]]) -> None:
        while (await receive()).get("type") != "http.disconnect":
            pass
        self._leave()

    def _leave(self, _: object = None) -> None:
        self.left = True
        if self.task is not None:
            self.task.cancel()

    def left_before(self) -> None:
        """Stop watching; raise ``ConnectionError`` (the watcher's cancellation taken back) if the client left,
        unless the task was also cancelled by another (then that cancellation goes on)."""
        if self.lost is not None:
            self.lost.remove_done_callback(self._leave)
        elif self.watching is not None:
            self.watching.cancel()
        if not self.left or self.task is None:
            return
        if self.task.uncancel() > 0:
            return  # cancelled by another too: the caller's CancelledError (or the next await's) goes on
        raise ConnectionError("the client disconnected before the answer") from None


def _too_large(limit: int) -> GatewayError:
    return GatewayError(
        413,
        f"the request body is larger than the {limit} bytes this gateway accepts ([gateway] max_body_bytes)",
        kind="too_large",
    )


class _EventStream(Response):
    """A ``text/event-stream`` answer driven by ``streaming.stream_response``; records the exchange when done."""

    def __init__(
        self,
        pipeline: Pipeline,
        exchange: Exchange,
        chunks: AsyncIterator[bytes],
        encoder: StreamEncoder,
        final: list[LLMResponse],
        extra: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code=200)
        self._extra = extra or {}
        self._pipeline = pipeline
        self._exchange = exchange
        self._chunks = chunks
        self._encoder = encoder
        self._final = final

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        pipeline, exchange = self._pipeline, self._exchange
        raw = [*_STREAM_HEAD]
        raw += [(k.encode(), v.encode()) for k, v in pipeline.headers(exchange, self._extra).items()]

        async def error_response(error: GatewayError) -> None:
            body = dumps(error.body(exchange.dialect))
            extra = {**pipeline.headers(exchange), **error.response_headers(), "content-type": _JSON}
            headers = [(k.encode(), v.encode()) for k, v in extra.items()]
            await send({"type": "http.response.start", "status": error.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        try:
            outcome = await stream_response(
                send,
                receive,
                self._chunks,
                self._encoder,
                raw,
                error_response,
                pipeline.settings.keepalive_seconds,
                _connection_lost(scope),
            )
        except BaseException:
            pipeline.finish(exchange, 500, GatewayError(500, "stream failed", kind="internal"), None)
            raise
        error = outcome.error
        if outcome.disconnected and error is None:
            error = GatewayError(499, "the client disconnected", kind="client_disconnected")
        pipeline.finish(exchange, outcome.status, error, self._final[0] if self._final else None)
