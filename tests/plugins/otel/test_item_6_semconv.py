"""Issue 16 item 6: the OpenTelemetry plugin names attributes and metrics with the semantic-conventions constants."""

from __future__ import annotations

import re
from pathlib import Path

import llmplex_otel
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes

from llmplex.client import Client
from llmplex.providers.mock import MockBackend
from llmplex.types import Tool
from tests.plugins.otel.test_otel import Telemetry, otel

__all__ = ["otel"]

SEMCONV_NAMES = {
    value
    for module in (gen_ai, gen_ai_metrics, error_attributes)
    for name, value in vars(module).items()
    if name.isupper() and isinstance(value, str)
}


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_item_6_every_emitted_gen_ai_name_is_a_semconv_constant(
    otel: Telemetry, client: Client, mock_backend: MockBackend
) -> None:
    mock_backend.push(tool_calls=[{"name": "add", "arguments": '{"a": 1, "b": 2}'}])
    mock_backend.push("3", usage={"input_tokens": 9, "output_tokens": 1})
    client.complete("mock:m", "what is 1 + 2?", tools=[Tool.from_function(add)])

    emitted = {key for span in otel.finished() for key in (span.attributes or {})}
    for metric in (gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE, gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION):
        emitted |= {key for point in otel.histogram(metric) for key in (point.attributes or {})}
    standard = {key for key in emitted if not key.startswith("llmplex.")}
    assert standard, emitted
    assert standard <= SEMCONV_NAMES, standard - SEMCONV_NAMES
    assert {
        gen_ai.GEN_AI_OPERATION_NAME,
        gen_ai.GEN_AI_PROVIDER_NAME,
        gen_ai.GEN_AI_REQUEST_MODEL,
        gen_ai.GEN_AI_RESPONSE_MODEL,
        gen_ai.GEN_AI_USAGE_INPUT_TOKENS,
        gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS,
        gen_ai.GEN_AI_RESPONSE_FINISH_REASONS,
        gen_ai.GEN_AI_TOOL_NAME,
        gen_ai.GEN_AI_TOKEN_TYPE,
    } <= emitted


def test_item_6_metric_names_are_the_semconv_constants(otel: Telemetry, client: Client) -> None:
    client.complete("mock:echo", "hello")
    assert otel.histogram(gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE)
    assert otel.histogram(gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION)


def test_item_6_no_hand_written_gen_ai_strings_in_the_plugin() -> None:
    source = Path(llmplex_otel.__file__).parent
    written = {
        f"{path.name}: {match}"
        for path in source.glob("*.py")
        for match in re.findall(r"[\"'](gen_ai\.[a-z_.]+|error\.type)[\"']", path.read_text(encoding="utf-8"))
    }
    assert not written, written
