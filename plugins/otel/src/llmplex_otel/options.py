"""Which providers the plugin reports to, and whether it may record content."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider, NoOpMeterProvider
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, TracerProvider

_METRICS_GLOBALS = sys.modules.get("opentelemetry.metrics._internal")
"""The (private) module holding the API's global meter provider, loaded by ``opentelemetry.metrics``."""

__all__ = ["CAPTURE_CONTENT_ENV", "Options", "configured", "instrument", "uninstrument"]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True)
class Options:
    """What ``instrument`` set; ``None`` means the global provider / the environment."""

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    capture_content: bool | None = None


_lock = threading.Lock()
_options = Options()


def instrument(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    capture_content: bool | None = None,
) -> None:
    """Report to these providers instead of the global ones; ``capture_content`` records prompts and tool data."""
    global _options
    with _lock:
        _options = Options(tracer_provider, meter_provider, capture_content)


def uninstrument() -> None:
    """Back to the global providers and the environment variable."""
    instrument()


_FROM_ENV = any(name in os.environ for name in ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER"))
"""Whether the environment names a provider the OpenTelemetry API loads on first use (read at import)."""


def configured() -> bool:
    """Whether a tracer or meter provider is in force; asked before each llmplex event, so the usual idle
    answer (nothing given to ``instrument``, no global provider set) takes a few attribute reads.

    Those reads are the API's private globals (``set_tracer_provider`` has no public hook, and the public
    getters cost ten times more); a global not found where it is read counts as set, so an API that moved
    it is asked through the public getters: slower, never wrong."""
    options = _options
    if (
        not _FROM_ENV
        and options.tracer_provider is None
        and options.meter_provider is None
        and getattr(trace, "_TRACER_PROVIDER", trace) is None
        and getattr(_METRICS_GLOBALS, "_METER_PROVIDER", metrics) is None
    ):
        return False
    return active_tracer_provider() is not None or active_meter_provider() is not None


def active_tracer_provider() -> TracerProvider | None:
    """The tracer provider to use, or ``None`` when no real one is configured."""
    provider = _options.tracer_provider or trace.get_tracer_provider()
    return None if isinstance(provider, (ProxyTracerProvider, NoOpTracerProvider)) else provider


def active_meter_provider() -> MeterProvider | None:
    """The meter provider to use, or ``None`` when no real one is configured."""
    provider = _options.meter_provider or metrics.get_meter_provider()
    if isinstance(provider, NoOpMeterProvider) or type(provider).__name__ == "_ProxyMeterProvider":
        return None
    return provider


def capture_content() -> bool:
    """Whether prompt payloads and tool arguments/results may be recorded (opt-in)."""
    if _options.capture_content is not None:
        return _options.capture_content
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")
