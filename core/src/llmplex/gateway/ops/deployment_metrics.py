"""Per-deployment figures of the model groups on ``/metrics``: requests, failures, cooldowns, latency, hedges.

An observer of the gateway's client (registered only when the config has
groups, so a gateway without them builds no event for it). Labels are
bounded by the config: ``group`` is a ``[groups.NAME]`` name and
``deployment`` one of its deployments' model strings; an attempt elsewhere
is not counted here (the request metrics count it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmplex.errors import LLMError
from llmplex.events import DeploymentCooled, DeploymentFailed, Event, Hedged, PromptExecuted, RequestStarted
from llmplex.hookspecs import hookimpl

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from llmplex.client import Client

__all__ = ["DeploymentMetrics"]

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_MAX_ERROR_TYPES = 32


class DeploymentMetrics:
    """Counts each attempt of a group's deployment (an event observer) into ``registry``."""

    def __init__(self, client: Client, registry: CollectorRegistry) -> None:
        from prometheus_client import Counter, Histogram

        self._where: dict[str, tuple[str, str]] = {}  # routed "prefix:model" -> (group, deployment as written)
        for name in client.config.groups:
            try:
                group = client.router.group(name)
                for deployment in group.deployments:
                    self._where.setdefault(group.route(deployment).spec, (name, deployment.spec))
            except LLMError:  # a deployment that cannot be routed yet fails its own requests; it is not counted
                continue
        self._groups = frozenset(client.config.groups)
        self._error_types: set[str] = set()
        prefix = "llmplex_gateway_deployment_"
        labels = ("group", "deployment")
        r = registry
        self.requests = Counter(prefix + "requests", "Attempts sent to a group's deployment.", labels, registry=r)
        self.failures = Counter(
            prefix + "failures", "Failed attempts of a group's deployment.", (*labels, "type"), registry=r
        )
        self.cooldowns = Counter(prefix + "cooldowns", "Times a deployment started to cool down.", labels, registry=r)
        self.latency = Histogram(
            prefix + "latency_seconds",
            "Seconds to a deployment's answer.",
            labels,
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.hedges = Counter(
            "llmplex_gateway_group_hedges", "Hedged requests of a group, by whether the hedge won.", ("group", "won"),
            registry=r,
        )  # fmt: skip
        self.hedge_tokens = Counter(
            "llmplex_gateway_group_hedge_tokens", "Tokens losing hedges reported (hedge cost).", ("group",), registry=r
        )

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        """Count the events of group deployments."""
        if isinstance(event, Hedged):
            if event.group in self._groups:
                self.hedges.labels(event.group, "true" if event.won else "false").inc()
                if event.hedge_usage.total_tokens > 0:
                    self.hedge_tokens.labels(event.group).inc(event.hedge_usage.total_tokens)
            return
        if not isinstance(event, (RequestStarted, PromptExecuted, DeploymentFailed, DeploymentCooled)):
            return
        where = self._where.get(f"{event.provider}:{event.model}")
        if where is None:
            return
        if isinstance(event, RequestStarted):
            self.requests.labels(*where).inc()
        elif isinstance(event, PromptExecuted):
            if not event.cached:
                self.latency.labels(*where).observe(event.latency)
        elif isinstance(event, DeploymentFailed):
            self.failures.labels(*where, self._error_type(event.error_type)).inc()
        else:
            self.cooldowns.labels(*where).inc()

    def _error_type(self, kind: str) -> str:
        if kind in self._error_types or len(self._error_types) < _MAX_ERROR_TYPES:
            self._error_types.add(kind)
            return kind
        return "other"
