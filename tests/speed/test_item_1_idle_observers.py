"""Issue 34 item 1: an idle observer costs nothing. Core builds and delivers events only while someone observes them;
llmplex-otel with no provider configured is idle; a provider configured later, or a subscriber added at run time,
switches events back on without a new client."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import llmplex_otel
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from llmplex import hookimpl
from llmplex.client import Client
from llmplex.events import CallEnded, Event, PromptExecuted, RequestStarted
from llmplex.testing.observe import Observed

OTHER_OBSERVERS = ["recorder", "exitobserver"]  # the test distribution's always-on observers


class Subscribable:
    """An observer idle until something subscribes to it (what a queue-feeding plugin looks like)."""

    def __init__(self) -> None:
        self.subscribers = 0
        self.events: list[Event] = []
        self.asked = 0

    @hookimpl
    def llmplex_observing(self) -> bool:
        self.asked += 1
        return self.subscribers > 0

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        self.events.append(event)


class Built:
    """Counts what core hands to observers (every event built for them passes here)."""

    def __init__(self, client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[Any] = []
        deliver = client.host.emit

        def counting(event: Any) -> None:
            self.events.append(event)
            deliver(event)

        monkeypatch.setattr(client.host, "emit", counting)


@pytest.fixture(autouse=True)
def quiet_logger() -> Iterator[None]:
    """No ``llmplex`` log level enabled: log records are the other reason core builds events."""
    logger = logging.getLogger("llmplex")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


@pytest.fixture
def idle_client() -> Iterator[Client]:
    llmplex_otel.uninstrument()
    client = Client(disabled=OTHER_OBSERVERS)
    yield client
    llmplex_otel.uninstrument()
    client.close()


def tracing() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    llmplex_otel.instrument(tracer_provider=provider)
    return exporter


def test_item_1_idle_otel_means_no_event_is_built_sync_and_async(
    idle_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = Built(idle_client, monkeypatch)
    assert idle_client.complete("mock:echo", "hi").text == "hi"
    assert asyncio.run(idle_client.acomplete("mock:echo", "there")).text == "there"
    assert idle_client.host.pm.has_plugin("llmplex.plugins:otel")  # installed and loaded, only idle
    assert built.events == []
    assert not idle_client.telemetry.wants(CallEnded)


def test_item_1_idle_stream_builds_no_event(idle_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    built = Built(idle_client, monkeypatch)
    assert "".join(e.text or "" for e in idle_client.stream("mock:echo", "a b c") if e.type == "text") == "a b c"
    assert built.events == []


def test_item_1_tracer_configured_later_switches_events_on_and_off(
    idle_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = Built(idle_client, monkeypatch)
    idle_client.complete("mock:echo", "before")
    assert built.events == []
    exporter = tracing()  # configured after the client made calls: no restart
    idle_client.complete("mock:echo", "during")
    kinds = {type(e) for e in built.events}
    assert {RequestStarted, PromptExecuted, CallEnded} <= kinds
    assert [s.name for s in exporter.get_finished_spans() if s.name.startswith("chat ")] == ["chat echo"]
    llmplex_otel.uninstrument()
    seen = len(built.events)
    idle_client.complete("mock:echo", "after")
    assert len(built.events) == seen  # idle again


def test_item_1_subscriber_added_at_run_time_gets_every_event(
    idle_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = Built(idle_client, monkeypatch)
    idle_client.complete("mock:echo", "nobody")
    assert built.events == []
    observed = Observed()
    idle_client.host.register_observer(observed)
    idle_client.complete("mock:echo", "somebody")
    assert type(observed.events[0]) is RequestStarted
    assert isinstance(observed.events[-1], CallEnded) and observed.events[-1].status == "ok"
    idle_client.host.unregister_observer(observed)
    seen = len(built.events)
    idle_client.complete("mock:echo", "nobody again")
    assert len(built.events) == seen


def test_item_1_plugin_subscribed_to_nothing_is_idle_until_a_subscriber_comes(
    idle_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = Subscribable()
    idle_client.host.register_observer(plugin)
    built = Built(idle_client, monkeypatch)
    idle_client.complete("mock:echo", "x")
    assert plugin.asked > 0 and plugin.events == [] and built.events == []
    plugin.subscribers = 1  # no re-registration: the next check sees it
    idle_client.complete("mock:echo", "y")
    assert isinstance(plugin.events[-1], CallEnded)


def test_item_1_an_active_observer_next_to_an_idle_one_still_gets_events(idle_client: Client) -> None:
    idle, active = Subscribable(), Observed()
    idle_client.host.register_observer(idle)
    idle_client.host.register_observer(active)
    idle_client.complete("mock:echo", "z")
    assert isinstance(active.events[-1], CallEnded)


def test_item_1_hostile_idle_check_that_raises_counts_as_listening(idle_client: Client) -> None:
    class Broken(Subscribable):
        @hookimpl
        def llmplex_observing(self) -> bool:
            raise RuntimeError("boom")

    broken = Broken()
    idle_client.host.register_observer(broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert idle_client.complete("mock:echo", "still works").text == "still works"
    assert isinstance(broken.events[-1], CallEnded)  # a broken check never hides events
    assert any("llmplex_observing failed" in str(w.message) and "boom" in str(w.message) for w in caught)


def test_item_1_hostile_gate_without_an_event_hook_makes_nobody_listen(idle_client: Client) -> None:
    class GateOnly:
        @hookimpl
        def llmplex_observing(self) -> bool:
            return True

    idle_client.host.register_observer(GateOnly())
    idle_client.complete("mock:echo", "warm")
    assert not idle_client.host.has_event_listeners


def test_item_1_hostile_observer_without_the_gate_always_listens(idle_client: Client) -> None:
    class Plain:
        @hookimpl
        def llmplex_event(self, event: Event) -> None:
            del event

    idle_client.host.register_observer(Plain())
    assert idle_client.host.has_event_listeners


def test_item_1_global_tracer_provider_set_later_switches_events_on(
    idle_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``trace.set_tracer_provider`` does (its global, set once per process: patched here so it is undone)."""
    from opentelemetry import trace

    built = Built(idle_client, monkeypatch)
    idle_client.complete("mock:echo", "before")
    assert built.events == []
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    idle_client.complete("mock:echo", "after")
    assert isinstance(built.events[-1], CallEnded)
    assert [s.name for s in exporter.get_finished_spans() if s.name.startswith("chat ")] == ["chat echo"]


def test_item_1_hostile_a_no_op_provider_keeps_otel_idle(idle_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.trace import NoOpTracerProvider

    built = Built(idle_client, monkeypatch)
    llmplex_otel.instrument(tracer_provider=NoOpTracerProvider())
    idle_client.complete("mock:echo", "nothing to record")
    assert built.events == []
