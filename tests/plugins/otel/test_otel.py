"""llmplex-otel: spans and metrics after the GenAI semantic conventions, read from the SDK's in-memory exporters."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import llmplex_otel
import pytest
from llmplex_otel import plugin
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from llmplex.client import Client
from llmplex.errors import LLMBadRequestError, LLMRateLimitError, LLMServerError
from llmplex.plugins.discovery import OBSERVER_GROUP, list_entries
from llmplex.providers.mock import MockBackend
from llmplex.reliability.throttle import ThrottlePolicy

NO_WAIT = ThrottlePolicy(max_attempts=3, base_delay=0, max_delay=0)


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name.startswith(prefix)]

    def histogram(self, name: str) -> list[HistogramDataPoint]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
            if isinstance(point, HistogramDataPoint)
        ]


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    llmplex_otel.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
    yield Telemetry(exporter, reader)
    llmplex_otel.uninstrument()


def children(parent: ReadableSpan, spans: list[ReadableSpan]) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def test_installed_as_an_llmplex_plugin() -> None:
    kept, _ = list_entries(OBSERVER_GROUP)
    assert any(e.name == "otel" and e.module == "llmplex_otel.plugin" for e in kept)


def test_one_request_span_with_one_attempt_child(otel: Telemetry, client: Client) -> None:
    response = client.complete("mock:echo", "hello open telemetry")
    assert response.text == "hello open telemetry"
    spans = otel.finished()
    (request,) = otel.named("chat ")
    assert request.name == "chat echo"
    assert request.parent is None
    (attempt,) = children(request, spans)
    assert attempt.name == "attempt 1"
    assert request.attributes is not None
    assert dict(request.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "mock",
        "gen_ai.system": "mock",
        "gen_ai.request.model": "echo",
        "gen_ai.response.model": "echo",
        "gen_ai.usage.input_tokens": 3,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": ("stop",),
        "llmplex.request_id": request.attributes["llmplex.request_id"],
        "llmplex.stream": False,
    }
    assert attempt.attributes is not None
    assert attempt.attributes["llmplex.attempt"] == 1
    assert attempt.status.status_code is StatusCode.UNSET
    assert "llmplex.request.payload" not in attempt.attributes, "prompt content is opt-in"


def test_retries_are_attempt_children_and_retry_events(
    otel: Telemetry, client: Client, mock_backend: MockBackend
) -> None:
    mock_backend.push_error(LLMRateLimitError("slow down", status_code=429))
    mock_backend.push_error(LLMServerError("boom", status_code=500))
    mock_backend.push("finally")
    assert client.complete("mock:m", "x", throttle=NO_WAIT).attempts == 3
    spans = otel.finished()
    (request,) = otel.named("chat ")
    attempts = sorted(children(request, spans), key=lambda s: s.start_time or 0)
    assert [a.name for a in attempts] == ["attempt 1", "attempt 2", "attempt 3"]
    assert [a.attributes and a.attributes.get("error.type") for a in attempts] == [
        "LLMRateLimitError",
        "LLMServerError",
        None,
    ]
    assert [a.status.status_code for a in attempts] == [StatusCode.ERROR, StatusCode.ERROR, StatusCode.UNSET]
    assert [(e.name, e.attributes and e.attributes["error.type"]) for e in request.events] == [
        ("retry", "LLMRateLimitError"),
        ("retry", "LLMServerError"),
    ]
    assert request.status.status_code is StatusCode.UNSET


def test_fallbacks_show_on_the_request_span(otel: Telemetry, client: Client, mock_backend: MockBackend) -> None:
    mock_backend.push_error(LLMServerError("down", status_code=503))
    response = client.complete("mock:primary", "x", throttle=ThrottlePolicy(max_attempts=1), fallbacks=["mock:backup"])
    assert response.model == "backup"
    (request,) = otel.named("chat ")
    (fallback,) = [e for e in request.events if e.name == "fallback"]
    assert fallback.attributes is not None
    assert (fallback.attributes["from"], fallback.attributes["to"]) == ("mock:primary", "mock:backup")
    attempts = sorted(children(request, otel.finished()), key=lambda s: s.start_time or 0)
    assert [a.attributes and a.attributes["gen_ai.request.model"] for a in attempts] == ["primary", "backup"]
    assert attempts[0].status.status_code is StatusCode.ERROR


def test_a_failed_request_carries_the_error_type(otel: Telemetry, client: Client, mock_backend: MockBackend) -> None:
    mock_backend.push_error(LLMBadRequestError("bad input", status_code=400))
    with pytest.raises(LLMBadRequestError):
        client.complete("mock:m", "x")
    (request,) = otel.named("chat ")
    (attempt,) = children(request, otel.finished())
    for span in (request, attempt):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "LLMBadRequestError"
    (duration,) = otel.histogram("gen_ai.client.operation.duration")
    assert duration.count == 1
    assert duration.attributes is not None
    assert duration.attributes["error.type"] == "LLMBadRequestError"


def test_tool_calls_are_children_of_the_request_that_asked(
    otel: Telemetry, client: Client, mock_backend: MockBackend
) -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    mock_backend.push(tool_calls=[{"id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'}])
    mock_backend.push("5")
    assert client.complete("mock:m", "2+3?", tools=[add]).text == "5"
    spans = otel.finished()
    (tool,) = otel.named("execute_tool ")
    assert tool.name == "execute_tool add"
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "add"
    assert "gen_ai.tool.call.arguments" not in tool.attributes
    asking = [r for r in otel.named("chat ") if tool in children(r, spans)]
    assert len(asking) == 1
    assert asking[0].attributes is not None
    assert asking[0].attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)


def test_content_is_recorded_only_when_opted_in(
    otel: Telemetry, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.complete("mock:echo", "private words")
    monkeypatch.setenv(llmplex_otel.CAPTURE_CONTENT_ENV, "true")
    client.complete("mock:echo", "shared words")
    first, second = sorted(otel.named("attempt "), key=lambda s: s.start_time or 0)
    assert first.attributes is not None
    assert second.attributes is not None
    assert "llmplex.request.payload" not in first.attributes
    payload = json.loads(str(second.attributes["llmplex.request.payload"]))
    assert payload["messages"] == [{"role": "user", "content": "shared words"}]


def test_streams_are_traced_once_consumed(otel: Telemetry, client: Client) -> None:
    text = "".join(e.text for e in client.stream("mock:echo", "a streamed answer") if e.type == "text")
    assert text == "a streamed answer"
    (request,) = otel.named("chat ")
    assert request.attributes is not None
    assert request.attributes["llmplex.stream"] is True
    assert request.attributes["gen_ai.usage.output_tokens"] == 3


def test_token_usage_metric(otel: Telemetry, client: Client, mock_backend: MockBackend) -> None:
    mock_backend.push("ok", usage={"input_tokens": 11, "output_tokens": 7})
    client.complete("mock:m", "x")
    points = {p.attributes["gen_ai.token.type"]: p for p in otel.histogram("gen_ai.client.token.usage") if p.attributes}
    assert (points["input"].sum, points["output"].sum) == (11, 7)
    assert points["input"].attributes is not None
    assert points["input"].attributes["gen_ai.request.model"] == "m"
    (duration,) = otel.histogram("gen_ai.client.operation.duration")
    assert duration.count == 1


def test_nothing_is_recorded_without_a_configured_provider(client: Client) -> None:
    llmplex_otel.uninstrument()
    client.complete("mock:echo", "unobserved")
    assert plugin.recorders() == (None, None)


def test_requests_the_plugin_tracks_are_all_closed(otel: Telemetry, client: Client) -> None:
    for _ in range(3):
        client.complete("mock:echo", "x")
    span_recorder, _ = plugin.recorders()
    assert span_recorder is not None
    assert span_recorder.open_requests == 0
