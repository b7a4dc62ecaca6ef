"""Events to spans: one span per request, a child per attempt and per tool call."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanContext, SpanKind, Status, StatusCode, Tracer

from llmplex.events import (
    Event,
    FallbackUsed,
    PromptExecuted,
    PromptRendered,
    RequestFailed,
    RequestStarted,
    Throttled,
    ToolInvoked,
)
from llmplex_otel import attributes as attr

__all__ = ["SpanRecorder"]

_MAX_OPEN = 10_000
_MAX_ENDED = 1_024


@dataclass
class _Request:
    span: Span
    attempt: Span | None = None


class SpanRecorder:
    """Keeps the open spans of each request (by ``request_id``) and ends them as events arrive."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer
        self._open: OrderedDict[str, _Request] = OrderedDict()
        self._ended: OrderedDict[str, SpanContext] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def open_requests(self) -> int:
        """Requests whose span is still open."""
        return len(self._open)

    def record(self, event: Event, capture_content: bool) -> None:
        """Update the spans of ``event``'s request."""
        with self._lock:
            if isinstance(event, RequestStarted):
                self._started(event)
            elif isinstance(event, PromptRendered):
                self._rendered(event, capture_content)
            elif isinstance(event, Throttled):
                self._end_attempt(event.request_id, event.reason, {attr.RETRY_DELAY: event.delay})
                self._request_event(event, "retry", {attr.ERROR_TYPE: event.reason, attr.RETRY_DELAY: event.delay})
            elif isinstance(event, FallbackUsed):
                self._end_attempt(event.request_id, event.error_type)
                to = f"{event.provider}:{event.model}"
                self._request_event(event, "fallback", {"from": event.failed_model, "to": to})
            elif isinstance(event, PromptExecuted):
                self._executed(event)
            elif isinstance(event, RequestFailed):
                self._failed(event)
            elif isinstance(event, ToolInvoked):
                self._tool(event, capture_content)

    # -- requests and attempts ---------------------------------------------------------

    def _request(self, event: Event) -> _Request:
        request = self._open.get(event.request_id)
        if request is None:
            span = self.tracer.start_span(
                f"{attr.CHAT} {event.model}", kind=SpanKind.CLIENT, attributes=attr.common_attributes(event)
            )
            request = self._open[event.request_id] = _Request(span)
            if len(self._open) > _MAX_OPEN:  # a stream abandoned half-way never finishes: drop the oldest
                _, dropped = self._open.popitem(last=False)
                dropped.span.end()
        return request

    def _started(self, event: RequestStarted) -> None:
        request = self._request(event)
        if request.attempt is not None:
            request.attempt.end()
        context = trace.set_span_in_context(request.span, Context())
        attributes = {**attr.common_attributes(event), attr.ATTEMPT: event.attempt, attr.STREAM: event.stream}
        request.attempt = self.tracer.start_span(
            f"attempt {event.attempt}", context=context, kind=SpanKind.CLIENT, attributes=attributes
        )
        request.span.set_attribute(attr.STREAM, event.stream)

    def _rendered(self, event: PromptRendered, capture_content: bool) -> None:
        request = self._open.get(event.request_id)
        if capture_content and request is not None and request.attempt is not None:
            request.attempt.set_attribute(attr.PAYLOAD, json.dumps(event.payload, default=str))

    def _end_attempt(self, request_id: str, error_type: str | None, extra: dict[str, Any] | None = None) -> None:
        request = self._open.get(request_id)
        if request is None or request.attempt is None:
            return
        span, request.attempt = request.attempt, None
        if extra:
            span.set_attributes(extra)
        if error_type:
            span.set_attribute(attr.ERROR_TYPE, error_type)
            span.set_status(Status(StatusCode.ERROR))
        span.end()

    def _request_event(self, event: Event, name: str, attributes: dict[str, Any]) -> None:
        self._request(event).span.add_event(name, {attr.ATTEMPT: event.attempt, **attributes})

    def _executed(self, event: PromptExecuted) -> None:
        answer: dict[str, Any] = {
            attr.RESPONSE_MODEL: event.model,
            **attr.usage_attributes(event.usage),
            attr.FINISH_REASONS: (event.finish_reason,) if event.finish_reason else (),
        }
        request = self._request(event)
        if request.attempt is not None:
            request.attempt.set_attributes(answer)
        self._end_attempt(event.request_id, None)
        request.span.set_attributes({**answer, attr.PROVIDER: attr.provider_name(event.provider)})
        self._finish(event.request_id, request)

    def _failed(self, event: RequestFailed) -> None:
        request = self._request(event)
        self._end_attempt(event.request_id, event.error_type)
        request.span.set_attribute(attr.ERROR_TYPE, event.error_type)
        if event.gave_up:
            request.span.set_attribute(attr.GAVE_UP, event.gave_up)
        request.span.set_status(Status(StatusCode.ERROR, event.message))
        self._finish(event.request_id, request)

    def _finish(self, request_id: str, request: _Request) -> None:
        request.span.end()
        del self._open[request_id]
        self._ended[request_id] = request.span.get_span_context()
        if len(self._ended) > _MAX_ENDED:
            self._ended.popitem(last=False)

    # -- tools -------------------------------------------------------------------------

    def _tool(self, event: ToolInvoked, capture_content: bool) -> None:
        open_request = self._open.get(event.request_id)
        parent = open_request.span.get_span_context() if open_request else self._ended.get(event.request_id)
        context = trace.set_span_in_context(trace.NonRecordingSpan(parent), Context()) if parent else None
        attributes: dict[str, Any] = {**attr.common_attributes(event, attr.EXECUTE_TOOL), attr.TOOL_NAME: event.name}
        if capture_content:
            attributes[attr.TOOL_ARGUMENTS] = json.dumps(event.arguments, default=str)
            attributes[attr.TOOL_RESULT] = json.dumps(event.result, default=str)
        end = time.time_ns()
        span = self.tracer.start_span(
            f"{attr.EXECUTE_TOOL} {event.name}",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=end - int(event.duration * 1e9),
        )
        if event.error is not None:
            span.set_attribute(attr.ERROR_TYPE, "ToolError")
            span.set_status(Status(StatusCode.ERROR, event.error))
        span.end(end_time=end)
