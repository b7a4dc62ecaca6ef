"""llmplex-otel: OpenTelemetry spans and metrics for llmplex after the GenAI semantic conventions.

The plugin (entry point ``llmplex.plugins: otel``) listens to llmplex events.
It uses the global OpenTelemetry tracer and meter providers unless
``instrument`` names others, and does nothing while none is configured.
"""

from __future__ import annotations

from llmplex_otel.options import CAPTURE_CONTENT_ENV, instrument, uninstrument

__all__ = ["CAPTURE_CONTENT_ENV", "instrument", "uninstrument"]
