"""Events to the GenAI client metrics: token usage and operation duration."""

from __future__ import annotations

import threading
import time

from opentelemetry.metrics import Histogram, Meter

from llmplex.events import Event, PromptExecuted, RequestFailed, RequestStarted
from llmplex_otel import attributes as attr

__all__ = ["MetricRecorder"]

_MAX_OPEN = 10_000


class MetricRecorder:
    """``gen_ai.client.token.usage`` per answer and ``gen_ai.client.operation.duration`` per request."""

    def __init__(self, meter: Meter) -> None:
        self.tokens: Histogram = meter.create_histogram(
            attr.TOKEN_USAGE_METRIC, unit="{token}", description="Tokens used by one answer, by token type."
        )
        self.duration: Histogram = meter.create_histogram(
            attr.DURATION_METRIC, unit="s", description="Seconds from the first attempt to the outcome."
        )
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()

    def record(self, event: Event) -> None:
        """Count the tokens and time of finished requests."""
        if isinstance(event, RequestStarted):
            with self._lock:
                if len(self._started) < _MAX_OPEN:
                    self._started.setdefault(event.request_id, time.monotonic())
        elif isinstance(event, PromptExecuted):
            self._duration(event, None)
            labels = {**self._labels(event), attr.RESPONSE_MODEL: event.model}
            self.tokens.record(event.usage.input_tokens, {**labels, attr.TOKEN_TYPE: attr.INPUT})
            self.tokens.record(event.usage.output_tokens, {**labels, attr.TOKEN_TYPE: attr.OUTPUT})
        elif isinstance(event, RequestFailed):
            self._duration(event, event.error_type)

    def _labels(self, event: Event) -> dict[str, str]:
        labels = attr.common_attributes(event)
        del labels[attr.REQUEST_ID]
        return labels

    def _duration(self, event: Event, error_type: str | None) -> None:
        with self._lock:
            started = self._started.pop(event.request_id, None)
        if started is None:
            return
        labels = self._labels(event)
        if error_type:
            labels[attr.ERROR_TYPE] = error_type
        self.duration.record(time.monotonic() - started, labels)
