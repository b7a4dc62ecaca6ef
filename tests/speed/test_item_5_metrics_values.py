"""Issue 34 item 5: the gateway's metrics count a request without asking ``prometheus_client`` for a child.

``Metrics.observe`` looked the cost and the error counters' children up with ``labels`` on every request (a
validation and a lock each) and worked the label values out again each time. Now each label set's children are
kept once per the record's label inputs, the cost and each error type among them (counted through the children's
public ``inc``/``observe``). The exposition is the same, byte for byte, as through prometheus-client's public
calls, and the label values stay bounded.
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

import pytest
from prometheus_client import Counter, Histogram

from llmplex.gateway.ops import metrics as gateway_metrics
from llmplex.gateway.ops.metrics import MetricLabels, Metrics
from llmplex.gateway.records import RequestRecord
from llmplex.types import Usage
from tests.speed.gateway_records import record

LABELS = MetricLabels(frozenset({"openai:gpt-4o-mini", "fast"}), frozenset({"openai"}))


RECORDS = [
    record(),
    record(latency=0.005),  # on a bucket's bound
    record(latency=400.0, key_name=""),  # past the last bound: +Inf
    record(status=502, error_type="upstream", usage=None, cost_usd=None),
    record(status=429, error_type="rate_limited", provider="", model="", usage=None, cost_usd=None),
    record(model_asked="unknown", model="gpt-x", provider="elsewhere", cost_usd=Decimal(0)),
    record(status=999, stream=True, usage=Usage(input_tokens=1, output_tokens=0)),
    record(endpoint="responses", cost_usd=Decimal("1.5")),
]


def public_observe(metrics: Metrics, rec: RequestRecord, overhead: float | None) -> None:
    """What ``observe`` counts, through prometheus-client's public ``labels``/``inc``/``observe``."""
    labels = metrics.labels
    model, provider, key = labels.model(rec), labels.provider(rec), rec.key_name or "anonymous"
    status = str(rec.status) if 100 <= rec.status <= 599 else "other"
    metrics.requests.labels(rec.endpoint, model, provider, key, status).inc()
    if rec.error_type:
        metrics.errors.labels(rec.endpoint, model, provider, key, labels.error_type(rec.error_type)).inc()
    if rec.usage is not None:
        usage = rec.usage
        counts = (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens)
        for kind, count in zip(("input", "output", "cached", "reasoning"), counts, strict=True):
            if count > 0:
                metrics.tokens.labels(model, provider, key, kind).inc(count)
    if rec.cost_usd is not None and rec.cost_usd > 0:
        metrics.cost.labels(model, provider, key).inc(float(rec.cost_usd))
    metrics.latency.labels(rec.endpoint, model).observe(rec.latency)
    if overhead is not None:
        metrics.overhead.labels(rec.endpoint).observe(overhead)


def test_item_5_the_exposition_is_what_prometheus_clients_public_calls_give() -> None:
    fast, public = Metrics(LABELS), Metrics(LABELS)
    for _ in range(3):
        for index, rec in enumerate(RECORDS):
            overhead = None if index % 3 == 0 else 0.0005 * index
            fast.observe(rec, overhead)
            public_observe(public, rec, overhead)
    assert fast.exposition() == public.exposition()


def test_item_5_a_known_label_set_asks_prometheus_client_for_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = Metrics(LABELS)
    for rec in RECORDS:
        metrics.observe(rec, 0.001)
    asked: list[tuple[str, ...]] = []
    for kind in (Counter, Histogram):
        original = kind.labels

        def spy(self: Any, *values: str, _original: Any = original) -> Any:
            asked.append(values)
            return _original(self, *values)

        monkeypatch.setattr(kind, "labels", spy)
    for rec in RECORDS:
        metrics.observe(rec, 0.001)
    assert asked == []


def test_item_5_hostile_model_names_and_error_types_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gateway_metrics, "_MAX_CACHED", 50)
    metrics = Metrics(LABELS)
    for index in range(300):
        asked = f"sk-{secrets.token_hex(8)}-{index}"  # a client's made-up model, shaped like a key
        metrics.observe(record(model_asked=asked, model=asked, status=400, error_type=f"kind-{index}"), None)
    assert len(metrics._children) <= 50
    text = metrics.exposition()[0].decode()
    assert "sk-" not in text
    error_types = {
        sample.labels["type"]
        for family in metrics.registry.collect()
        if family.name == "llmplex_gateway_errors"
        for sample in family.samples
        if sample.name.endswith("_total")
    }
    assert len(error_types) <= 65
    assert "other" in error_types
