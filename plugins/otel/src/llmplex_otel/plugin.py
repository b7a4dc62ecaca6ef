"""The llmplex plugin: every event becomes spans and metrics, when OpenTelemetry is configured."""

from __future__ import annotations

import threading

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from llmplex.events import Event
from llmplex.hookspecs import hookimpl
from llmplex_otel import options
from llmplex_otel.measures import MetricRecorder
from llmplex_otel.spans import SpanRecorder

__all__ = ["llmplex_event", "recorders"]

_SCOPE = "llmplex_otel"
_VERSION = "0.1.0"
_lock = threading.Lock()
_spans: tuple[TracerProvider, SpanRecorder] | None = None
_metrics: tuple[MeterProvider, MetricRecorder] | None = None


def recorders() -> tuple[SpanRecorder | None, MetricRecorder | None]:
    """The recorders for the providers in force (``None`` where no provider is configured)."""
    global _spans, _metrics
    tracer_provider = options.active_tracer_provider()
    meter_provider = options.active_meter_provider()
    if tracer_provider is None and meter_provider is None:
        return None, None
    with _lock:
        if tracer_provider is None:
            span_recorder = None
        elif _spans is not None and _spans[0] is tracer_provider:
            span_recorder = _spans[1]
        else:
            span_recorder = SpanRecorder(tracer_provider.get_tracer(_SCOPE, _VERSION))
            _spans = (tracer_provider, span_recorder)
        if meter_provider is None:
            metric_recorder = None
        elif _metrics is not None and _metrics[0] is meter_provider:
            metric_recorder = _metrics[1]
        else:
            metric_recorder = MetricRecorder(meter_provider.get_meter(_SCOPE, _VERSION))
            _metrics = (meter_provider, metric_recorder)
    return span_recorder, metric_recorder


@hookimpl
def llmplex_event(event: Event) -> None:
    """Record ``event`` as spans and metrics; a no-op while OpenTelemetry is not configured."""
    span_recorder, metric_recorder = recorders()
    if span_recorder is not None:
        span_recorder.record(event, options.capture_content())
    if metric_recorder is not None:
        metric_recorder.record(event)
