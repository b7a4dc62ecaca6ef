"""One request in flight (``Exchange``) and what is recorded of it when it ends (``exchange_record``).

Request ids are unique across processes (a random prefix per process, made
again after ``fork``, and a counter): the spend log inserts each row once per
request id, so a journal replayed after a crash never counts one twice.

A stream that ended without the provider's final answer (the client left, the
provider cut it) is recorded with the usage it reported (in an event, or kept by
core without one, as Gemini's usage so far: ``Call.reported_so_far``) or, when it
reported none, an estimate (``StreamProgress``), marked as one in ``cost_note``. A usage so far that cannot be
read, breaks ``Usage``'s rules or counts more than ``MOST_TOKENS`` counts as none reported.
"""

from __future__ import annotations

import itertools
import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.gateway.calls import CallSpec
from llmplex.gateway.errors import Dialect, GatewayError
from llmplex.gateway.keys.access import Caller
from llmplex.gateway.records import RequestRecord
from llmplex.gateway.spend.estimate import StreamProgress
from llmplex.types import Response as LLMResponse
from llmplex.types import Usage

if TYPE_CHECKING:
    from llmplex.engine.fallback import Call

__all__ = ["ESTIMATED", "MOST_TOKENS", "Exchange", "exchange_record", "new_request_id"]

ESTIMATED = (
    "estimated: the stream ended before the provider reported its usage; the prompt's tokens plus the output "
    "streamed so far, at 4 characters a token"
)
"""How ``cost_note`` starts for a usage the gateway estimated."""

MOST_TOKENS = 10**8
"""The most tokens a cut stream's usage so far may count (input plus output) to be charged: no model reads or writes
that many in one request, so more is a provider's (or plugin's) error, and the stream is estimated instead."""

_ids = itertools.count(1)
_process = uuid.uuid4().hex[:12]


def _new_process() -> None:
    global _process
    _process = uuid.uuid4().hex[:12]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_process)


def new_request_id() -> str:
    """A request id no other process (or restart) hands out: ``req-<process>-<n>``."""
    return f"req-{_process}-{next(_ids)}"


@dataclass
class Exchange:
    """One request in flight: when it arrived, who sent it, what it asked, and how it is going."""

    request_id: str
    endpoint: str
    dialect: Dialect
    arrived: float
    started_at: float
    caller: Caller | None = None
    model: str = ""
    stream: bool = False
    called: float | None = None  # perf_counter when the provider call began
    answered: float | None = None  # perf_counter when the provider's answer was complete
    spec: CallSpec | None = None
    progress: StreamProgress | None = None  # what a stream sent so far (charged if it ends without usage)
    call: Call | None = None  # a stream's call in core (what its provider reported so far is read there)
    journaled: bool = False  # its row is in the journal
    journaled_as: tuple[int, GatewayError | None, LLMResponse | None, RequestRecord] | None = None  # and how

    def overhead(self, end: float) -> float:
        """Seconds the gateway itself spent: everything but the provider call."""
        if self.called is None:
            return end - self.arrived
        before = self.called - self.arrived
        return before + (end - self.answered if self.answered is not None else 0.0)


def _so_far(call: Call | None) -> Usage | None:
    """The usage ``call``'s provider reported so far, when it can be read and is possible (see the module)."""
    if call is None:
        return None
    try:
        usage = call.reported_so_far()
        if not isinstance(usage, Usage):
            return None
        counts = usage.model_dump(exclude={"reported"})
        checked = Usage.of(counts)  # the counts checked again: a plugin may have built it without validation
    except Exception:  # a plugin's broken usage: none reported, the stream is estimated
        return None
    if not usage.reported or checked.input_tokens + checked.output_tokens > MOST_TOKENS:
        return None
    return usage


def _abandoned(client: Client, exchange: Exchange) -> tuple[Usage, str, str, bool] | None:
    """The usage, provider and model to charge a stream that ended without the provider's final answer: what it
    reported, else an estimate (and whether it is one)."""
    progress, spec = exchange.progress, exchange.spec
    if progress is None or spec is None:
        return None
    usage, estimated = progress.usage(spec.messages, spec.kwargs, _so_far(exchange.call))
    try:
        route = client.route(spec.model)
    except LLMError:
        return None
    return usage.priced(route.provider.info.name, route.model), route.provider.name, route.model, estimated


def exchange_record(
    client: Client,
    exchange: Exchange,
    status: int,
    error: GatewayError | None,
    answer: LLMResponse | None,
    end: float,
) -> RequestRecord:
    """The exchange as a ``RequestRecord``; a stream cut short is charged what it used (or an estimate)."""
    usage: Usage | None = answer.usage if answer is not None else None
    provider = answer.provider if answer else (error.provider or "" if error else "")
    model = answer.model if answer else (error.model or "" if error else "")
    estimated = False
    left = error is not None and error.status == 499
    if answer is None and exchange.progress is not None and (exchange.progress.events or left):
        charged = _abandoned(client, exchange)
        if charged is not None:
            usage, provider, model, estimated = charged
    cost = note = None
    if usage is not None:
        try:
            cost = usage.cost_usd
        except Exception as exc:  # price data unreadable: the cost stays unknown, never the request's failure
            note = f"pricing failed: {type(exc).__name__}"
        if cost is None and note is None:  # the usage's own note names what has no price (a model, a bucket)
            note = usage.cost_note or (f"no price known for {provider}:{model}" if provider else "no usage")
    if estimated:
        note = ESTIMATED if note is None else f"{ESTIMATED}; {note}"
    return RequestRecord(
        request_id=exchange.request_id,
        endpoint=exchange.endpoint,
        key_name=exchange.caller.name if exchange.caller else "",
        model_asked=exchange.model,
        provider=provider,
        model=model,
        stream=exchange.stream,
        status=status,
        error_type=error.kind if error else None,
        usage=usage,
        cost_usd=cost,
        cost_note=note,
        latency=end - exchange.arrived,
        started_at=exchange.started_at,
        usage_estimated=estimated,
    )
