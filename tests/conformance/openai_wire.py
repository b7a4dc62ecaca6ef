"""The OpenAI Chat Completions wire for the conformance kit, shared by every plugin that speaks it.

The adapter itself ships in the kit (``llmplex.testing.OpenAIChatWire``); here
:class:`ChatWire` validates each body it renders against OpenAI's OpenAPI spec,
and :class:`OpenAIWireConformance` is the kit over it, for the openai, llamacpp,
litellm, reference and OpenAI-compatible preset plugins. The helpers below are
shared with the Responses API wire and the error tests.
"""

from __future__ import annotations

from typing import Any, ClassVar

from llmplex.testing import FakeError, HTTPConformanceTests, OpenAIChatWire, Reply, WireAdapter
from llmplex.testing.openai_chat import CHAT_ERRORS, read_chat_request
from tests.contract import fixtures_openai as wire
from tests.contract.openapi import validate_openai

__all__ = [
    "ERRORS",
    "ChatWire",
    "OpenAIWireConformance",
    "calls_of",
    "error_body",
    "read_chat_request",
    "usage_of",
    "words_of",
]

ERRORS = CHAT_ERRORS
"""Error kind → the error type and code OpenAI answers with."""


def usage_of(reply: Reply) -> wire.TokenUsage:
    """The reply's token counts for the builders."""
    u = reply.usage
    return wire.TokenUsage(u.input_tokens, u.output_tokens, u.cached_tokens, u.reasoning_tokens)


def calls_of(reply: Reply) -> list[wire.FunctionCall]:
    """The reply's tool calls for the builders."""
    return [wire.FunctionCall(name=c.name, arguments=c.arguments, call_id=c.id) for c in reply.tool_calls]


def words_of(text: str) -> list[str]:
    """Stream deltas: each word after the first keeps its leading space."""
    words = text.split(" ")
    return [words[0], *(" " + w for w in words[1:])] if text else []


def error_body(error: FakeError) -> wire.Json:
    """A validated ``ErrorResponse`` body for ``error``."""
    return ChatWire().error_body(error)


class ChatWire(OpenAIChatWire):
    """The kit's Chat Completions adapter, every rendered body validated against OpenAI's OpenAPI spec."""

    def check(self, schema: str, body: dict[str, Any]) -> None:
        validate_openai(schema, body)


class OpenAIWireConformance(HTTPConformanceTests):
    """The kit against a local server speaking Chat Completions under ``base_path``."""

    wire: ClassVar[WireAdapter] = ChatWire()
    base_path: ClassVar[str] = "/v1"
