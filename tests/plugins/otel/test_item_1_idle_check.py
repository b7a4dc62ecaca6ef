"""Issue 34 item 1: llmplex-otel's idle check reads OpenTelemetry's private globals for speed. These tests pin
that the installed opentelemetry-api still keeps them where the plugin reads them, that the fast answer is the
public getters' answer in every state, and that an API which moved them is asked publicly (never wrong)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator

import llmplex_otel
import pytest
from llmplex_otel import options
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from packaging.version import Version


def public_answer() -> bool:
    return options.active_tracer_provider() is not None or options.active_meter_provider() is not None


@pytest.fixture(autouse=True)
def uninstrumented() -> Iterator[None]:
    llmplex_otel.uninstrument()
    yield
    llmplex_otel.uninstrument()


def test_item_1_the_private_globals_are_where_the_plugin_reads_them() -> None:
    """A new opentelemetry-api that moves them fails here (the plugin then stays right, only slower)."""
    assert Version(importlib.metadata.version("opentelemetry-api")) >= Version("1.45")  # the plugin's floor
    assert options._METRICS_GLOBALS is not None
    assert hasattr(trace, "_TRACER_PROVIDER") and hasattr(options._METRICS_GLOBALS, "_METER_PROVIDER")
    assert options._METRICS_GLOBALS.get_meter_provider is metrics.get_meter_provider  # the module the API uses


@pytest.mark.parametrize("which", ["tracer", "meter"])
def test_item_1_a_global_provider_set_later_is_seen_by_the_fast_check(
    which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``set_tracer_provider`` / ``set_meter_provider`` do (set once per process: patched so it is undone)."""
    assert options.configured() is False is public_answer()
    if which == "tracer":
        monkeypatch.setattr(trace, "_TRACER_PROVIDER", TracerProvider())
    else:
        monkeypatch.setattr(options._METRICS_GLOBALS, "_METER_PROVIDER", MeterProvider())
    assert options.configured() is True is public_answer()


@pytest.mark.parametrize("moved", ["trace", "metrics"])
def test_item_1_hostile_an_api_that_moved_its_globals_is_asked_publicly(
    moved: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The private name gone: the fast path is skipped and the public getters give the answer, both ways."""
    if moved == "trace":
        monkeypatch.delattr(trace, "_TRACER_PROVIDER")
    else:
        monkeypatch.setattr(options, "_METRICS_GLOBALS", None)
    asked: list[str] = []
    provider: dict[str, object] = {"trace": trace.ProxyTracerProvider(), "metrics": metrics.NoOpMeterProvider()}
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: asked.append("trace") or provider["trace"])
    monkeypatch.setattr(metrics, "get_meter_provider", lambda: asked.append("metrics") or provider["metrics"])
    assert options.configured() is False and moved in asked  # idle, and the public getter said so
    provider[moved] = TracerProvider() if moved == "trace" else MeterProvider()  # set where the API now keeps it
    assert options.configured() is True


def test_item_1_the_idle_answer_skips_the_public_getters(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the private reads: the usual idle answer costs no getter call."""

    def refuse() -> None:
        raise AssertionError("the idle check asked a public getter")

    monkeypatch.setattr(trace, "get_tracer_provider", refuse)
    monkeypatch.setattr(metrics, "get_meter_provider", refuse)
    assert options.configured() is False
