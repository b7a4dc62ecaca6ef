"""Prometheus metrics of the gateway (``GET /metrics``): requests, errors by type, tokens, cost, latency, in flight.

Labels are bounded whatever clients send (``MetricLabels``): ``model`` is a model
string the config names (an alias, a group, a fallback, ``[gateway] models``, the
default models), the one that answered or else the one asked for, ``other`` for
any other model and ``none`` when no provider was reached; ``provider`` is a
provider instance (configured or installed) or ``other``; ``key`` is the caller's
key name (``anonymous`` before one is known); ``status`` an HTTP status and
``type`` one of at most 64 error types (then ``other``). With several
worker processes (``PROMETHEUS_MULTIPROC_DIR`` set by ``llmplex serve``) every
worker writes its figures there and ``/metrics`` adds them up.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from llmplex.gateway.records import RequestRecord

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from llmplex.client import Client

__all__ = ["MetricLabels", "Metrics"]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
_OVERHEAD_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
_MAX_ERROR_TYPES = 64
_MAX_CACHED = 10_000  # label sets whose children are kept (then the cache starts again: children stay registered)
OTHER = "other"
_TOKEN_KINDS = ("input", "output", "cached", "reasoning")


class MetricLabels:
    """The label values ``/metrics`` may show: the configured model strings and provider instances."""

    def __init__(self, models: frozenset[str] = frozenset(), providers: frozenset[str] = frozenset()) -> None:
        self.models = models
        self.providers = providers
        self._error_types: set[str] = set()

    @classmethod
    def of(cls, client: Client) -> MetricLabels:
        """The model strings ``client``'s config names and its provider instances (configured or installed)."""
        config = client.config
        models = {config.default_model, config.default_embedding_model, *config.gateway.models}
        models.update(config.aliases)
        models.update(config.aliases.values())
        for model, chain in config.fallbacks.items():
            models.update((model, *chain))
        for name, group in config.groups.items():
            models.add(name)
            models.update(deployment.model for deployment in group.deployments)
        providers = {*config.providers, *client.host.entries()}
        return cls(frozenset(models - {""}), frozenset(providers))

    def model(self, record: RequestRecord) -> str:
        """The answering ``provider:model`` or the asked model when configured; ``other``; ``none`` unanswered."""
        if not record.provider:
            return "none"
        answered = f"{record.provider}:{record.model}"
        if answered in self.models:
            return answered
        return record.model_asked if record.model_asked in self.models else OTHER

    def provider(self, record: RequestRecord) -> str:
        """The provider instance that answered, ``none``, or ``other`` when it is not a known instance."""
        if not record.provider:
            return "none"
        return record.provider if record.provider in self.providers else OTHER

    def error_type(self, kind: str) -> str:
        """``kind`` while at most 64 error types were seen, else ``other`` (the gateway's own are far fewer)."""
        if kind in self._error_types:
            return kind
        if len(self._error_types) < _MAX_ERROR_TYPES:
            self._error_types.add(kind)
            return kind
        return OTHER


def _status(status: int) -> str:
    return str(status) if 100 <= status <= 599 else OTHER


class Metrics:
    """The gateway's collectors, in a registry of their own (several gateways may share a process)."""

    def __init__(self, labels: MetricLabels | None = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # the *_created series double the output and no dashboard reads them

        self.labels = labels or MetricLabels()
        self.registry = CollectorRegistry(auto_describe=True)
        prefix = "llmplex_gateway_"
        r = self.registry
        self.requests = Counter(
            prefix + "requests", "Finished requests.", ("endpoint", "model", "provider", "key", "status"), registry=r
        )
        self.errors = Counter(
            prefix + "errors",
            "Failed requests by error type.",
            ("endpoint", "model", "provider", "key", "type"),
            registry=r,
        )
        self.tokens = Counter(prefix + "tokens", "Tokens by bucket.", ("model", "provider", "key", "kind"), registry=r)
        self.cost = Counter(
            prefix + "cost_usd", "Cost in US dollars, where known.", ("model", "provider", "key"), registry=r
        )
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
        self._children: dict[tuple[str, str, str, str, str, int], _Children] = {}
        self._gauges: dict[str, Any] = {}

    def gauge(self, endpoint: str) -> Any:
        """The in-flight gauge of ``endpoint`` (its child looked up once)."""
        child = self._gauges.get(endpoint)
        if child is None:
            child = self._gauges[endpoint] = self.in_flight.labels(endpoint)
        return child

    def _of(self, record: RequestRecord) -> _Children:
        """The children of ``record``'s label set, looked up once per label inputs (``labels`` validates and
        locks each time)."""
        inputs = (record.endpoint, record.provider, record.model, record.model_asked, record.key_name, record.status)
        found = self._children.get(inputs)
        if found is None:
            if len(self._children) >= _MAX_CACHED:
                self._children.clear()
            labels = self.labels
            found = self._children[inputs] = _Children(
                self,
                record.endpoint,
                labels.model(record),
                labels.provider(record),
                record.key_name or "anonymous",
                _status(record.status),
            )
        return found

    def observe(self, record: RequestRecord, overhead: float | None) -> None:
        """Count one finished request."""
        children = self._of(record)
        children.requests.inc()
        if record.error_type:
            children.error(record.error_type).inc()
        usage = record.usage
        if usage is not None:
            counts = (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens)
            for index, count in enumerate(counts):
                if count > 0:
                    children.tokens(index).inc(count)
        if record.cost_usd is not None:
            cost = float(record.cost_usd)
            if cost > 0:
                children.cost().inc(cost)
        children.latency.observe(record.latency)
        if overhead is not None:
            children.overhead.observe(overhead)

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


class _Children:
    """The children of one label set (``requests``, ``latency``, ``overhead``); a token kind, the cost and an error
    type are made when first counted, so that none never seen shows a series."""

    def __init__(self, metrics: Metrics, endpoint: str, model: str, provider: str, key: str, status: str) -> None:
        self.requests = metrics.requests.labels(endpoint, model, provider, key, status)
        self.latency = metrics.latency.labels(endpoint, model)
        self.overhead = metrics.overhead.labels(endpoint)
        self._metrics = metrics
        self._names = (endpoint, model, provider, key)
        self._kinds: list[Any] = [None] * len(_TOKEN_KINDS)
        self._cost: Any = None
        self._errors: dict[str, Any] = {}

    def tokens(self, index: int) -> Any:
        """The token counter of kind ``_TOKEN_KINDS[index]``."""
        child = self._kinds[index]
        if child is None:
            child = self._kinds[index] = self._metrics.tokens.labels(*self._names[1:], _TOKEN_KINDS[index])
        return child

    def cost(self) -> Any:
        """The cost counter."""
        if self._cost is None:
            self._cost = self._metrics.cost.labels(*self._names[1:])
        return self._cost

    def error(self, kind: str) -> Any:
        """The error counter of type ``kind`` (bounded by ``MetricLabels.error_type``)."""
        child = self._errors.get(kind)
        if child is None:
            metrics = self._metrics
            child = metrics.errors.labels(*self._names, metrics.labels.error_type(kind))
            if len(self._errors) < _MAX_ERROR_TYPES:
                self._errors[kind] = child
        return child
