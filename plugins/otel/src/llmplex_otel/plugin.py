"""The llmplex plugin: every event becomes spans and metrics, when OpenTelemetry is configured."""

from __future__ import annotations

import functools
import threading

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from llmplex.events import Event
from llmplex.hookspecs import hookimpl
from llmplex_otel import options
from llmplex_otel.measures import MetricRecorder
from llmplex_otel.spans import SpanRecorder

_SCOPE = "llmplex_otel"
_VERSION = "0.1.0"
_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _span_recorder(provider: TracerProvider) -> SpanRecorder:
    return SpanRecorder(provider.get_tracer(_SCOPE, _VERSION))


@functools.lru_cache(maxsize=1)
def _metric_recorder(provider: MeterProvider) -> MetricRecorder:
    return MetricRecorder(provider.get_meter(_SCOPE, _VERSION))


def recorders() -> tuple[SpanRecorder | None, MetricRecorder | None]:
    """The recorders of the providers in force (``None`` where no provider is configured).

    One recorder per provider, kept while that provider stays in force: a recorder
    holds the open spans of requests in flight.
    """
    tracer_provider = options.active_tracer_provider()
    meter_provider = options.active_meter_provider()
    with _lock:
        return (
            None if tracer_provider is None else _span_recorder(tracer_provider),
            None if meter_provider is None else _metric_recorder(meter_provider),
        )


@hookimpl
def llmplex_observing() -> bool:
    """Idle (core builds no events for it) until a tracer or meter provider is configured."""
    return options.configured()


@hookimpl
def llmplex_event(event: Event) -> None:
    """Record ``event`` as spans and metrics; a no-op while OpenTelemetry is not configured."""
    span_recorder, metric_recorder = recorders()
    if span_recorder is not None:
        span_recorder.record(event, options.capture_content())
    if metric_recorder is not None:
        metric_recorder.record(event)
