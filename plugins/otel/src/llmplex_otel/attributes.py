"""GenAI semantic-convention attribute names and values."""

from __future__ import annotations

from typing import Any

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes

from llmplex.events import Event
from llmplex.types import Usage

__all__ = ["common_attributes", "provider_name", "usage_attributes"]

OPERATION = gen_ai.GEN_AI_OPERATION_NAME
PROVIDER = gen_ai.GEN_AI_PROVIDER_NAME
SYSTEM = gen_ai.GEN_AI_SYSTEM
REQUEST_MODEL = gen_ai.GEN_AI_REQUEST_MODEL
RESPONSE_MODEL = gen_ai.GEN_AI_RESPONSE_MODEL
INPUT_TOKENS = gen_ai.GEN_AI_USAGE_INPUT_TOKENS
OUTPUT_TOKENS = gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS
CACHE_READ_TOKENS = gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
CACHE_CREATION_TOKENS = gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS
REASONING_TOKENS = gen_ai.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS
FINISH_REASONS = gen_ai.GEN_AI_RESPONSE_FINISH_REASONS
TOKEN_TYPE = gen_ai.GEN_AI_TOKEN_TYPE
TOOL_NAME = gen_ai.GEN_AI_TOOL_NAME
TOOL_ARGUMENTS = gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS
TOOL_RESULT = gen_ai.GEN_AI_TOOL_CALL_RESULT
ERROR_TYPE = error_attributes.ERROR_TYPE
TOKEN_USAGE_METRIC = gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE
DURATION_METRIC = gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION
COST_USD = "llmplex.usage.cost_usd"
"""The answer's cost in US dollars (a float; left out when the price is unknown): not in the GenAI conventions."""
REQUEST_ID = "llmplex.request_id"
ATTEMPT = "llmplex.attempt"
STREAM = "llmplex.stream"
RETRY_DELAY = "llmplex.retry.delay"
GAVE_UP = "llmplex.gave_up"
PAYLOAD = "llmplex.request.payload"

CHAT = gen_ai.GenAiOperationNameValues.CHAT.value
EXECUTE_TOOL = gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value
INPUT = gen_ai.GenAiTokenTypeValues.INPUT.value
OUTPUT = gen_ai.GenAiTokenTypeValues.OUTPUT.value

_WELL_KNOWN = {
    "gemini": gen_ai.GenAiProviderNameValues.GCP_GEMINI.value,
    "mistral": gen_ai.GenAiProviderNameValues.MISTRAL_AI.value,
    "xai": gen_ai.GenAiProviderNameValues.X_AI.value,
    "bedrock": gen_ai.GenAiProviderNameValues.AWS_BEDROCK.value,
}


def provider_name(prefix: str) -> str:
    """The semantic-convention provider name for an llmplex prefix (the prefix itself when not well known)."""
    return _WELL_KNOWN.get(prefix, prefix)


def common_attributes(event: Event, operation: str = CHAT) -> dict[str, Any]:
    """Operation, provider and requested model of the request an event belongs to."""
    provider = provider_name(event.provider)
    return {
        OPERATION: operation,
        PROVIDER: provider,
        SYSTEM: provider,
        REQUEST_MODEL: event.model,
        REQUEST_ID: event.request_id,
    }


def usage_attributes(usage: Usage) -> dict[str, Any]:
    """Token counts of an answer (cache and reasoning counts when there are some) and its cost when known."""
    attributes: dict[str, Any] = {INPUT_TOKENS: usage.input_tokens, OUTPUT_TOKENS: usage.output_tokens}
    for name, count in (
        (CACHE_READ_TOKENS, usage.cached_tokens),
        (CACHE_CREATION_TOKENS, usage.cache_write_tokens),
        (REASONING_TOKENS, usage.reasoning_tokens),
    ):
        if count:
            attributes[name] = count
    cost = usage.cost_usd
    if cost is not None:
        attributes[COST_USD] = float(cost)
    return attributes
