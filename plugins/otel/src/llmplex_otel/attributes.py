"""GenAI semantic-convention attribute names and values."""

from __future__ import annotations

from typing import Any

from llmplex.events import Event

__all__ = ["common_attributes", "provider_name"]

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
REQUEST_ID = "llmplex.request_id"
ATTEMPT = "llmplex.attempt"
STREAM = "llmplex.stream"
RETRY_DELAY = "llmplex.retry.delay"
GAVE_UP = "llmplex.gave_up"
PAYLOAD = "llmplex.request.payload"

CHAT = "chat"
EXECUTE_TOOL = "execute_tool"

_WELL_KNOWN = {"gemini": "gcp.gemini", "mistral": "mistral_ai", "xai": "x_ai", "bedrock": "aws.bedrock"}


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
