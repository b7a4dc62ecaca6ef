"""Prometheus metrics of the gateway (``GET /metrics``): requests, errors by type, tokens, cost, latency, in flight.

Labels are bounded: ``model`` is the ``provider:model`` that answered (or
``none`` when no provider was reached, so a client cannot mint label values by
sending made-up model names) and ``key`` the caller's key name. With several
worker processes (``PROMETHEUS_MULTIPROC_DIR`` set by ``llmplex serve``) every
worker writes its figures there and ``/metrics`` adds them up.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from llmplex.gateway.records import RequestRecord

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
_OVERHEAD_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)


class Metrics:
    """The gateway's collectors, in a registry of their own (several gateways may share a process)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # the *_created series double the output and no dashboard reads them

        self.registry = CollectorRegistry(auto_describe=True)
        prefix = "llmplex_gateway_"
        r = self.registry
        self.requests = Counter(
            prefix + "requests", "Finished requests.", ("endpoint", "model", "key", "status"), registry=r
        )
        self.errors = Counter(
            prefix + "errors", "Failed requests by error type.", ("endpoint", "model", "key", "type"), registry=r
        )
        self.tokens = Counter(prefix + "tokens", "Tokens by bucket.", ("model", "key", "kind"), registry=r)
        self.cost = Counter(prefix + "cost_usd", "Cost in US dollars, where known.", ("model", "key"), registry=r)
        self.latency = Histogram(
            prefix + "request_latency_seconds",
            "Seconds from a request's arrival to its end.",
            ("endpoint", "model"),
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.overhead = Histogram(
            prefix + "overhead_seconds",
            "Seconds the gateway itself added to a request.",
            ("endpoint",),
            buckets=_OVERHEAD_BUCKETS,
            registry=r,
        )
        self.in_flight = Gauge(
            prefix + "in_flight", "Requests being served.", ("endpoint",), registry=r, multiprocess_mode="livesum"
        )

    def observe(self, record: RequestRecord, overhead: float | None) -> None:
        """Count one finished request."""
        model = f"{record.provider}:{record.model}" if record.provider else "none"
        key = record.key_name or "anonymous"
        self.requests.labels(record.endpoint, model, key, str(record.status)).inc()
        if record.error_type:
            self.errors.labels(record.endpoint, model, key, record.error_type).inc()
        if record.usage is not None:
            usage = record.usage
            for kind, count in (
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
                ("cached", usage.cached_tokens),
                ("reasoning", usage.reasoning_tokens),
            ):
                if count > 0:
                    self.tokens.labels(model, key, kind).inc(count)
        if record.cost_usd is not None and record.cost_usd > 0:
            self.cost.labels(model, key).inc(float(record.cost_usd))
        self.latency.labels(record.endpoint, model).observe(record.latency)
        if overhead is not None:
            self.overhead.labels(record.endpoint).observe(overhead)

    def exposition(self) -> tuple[bytes, str]:
        """The metrics in the Prometheus text format, and its content type (all workers' together)."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        registry: CollectorRegistry = self.registry
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import CollectorRegistry
            from prometheus_client.multiprocess import MultiProcessCollector

            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
