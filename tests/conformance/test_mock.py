"""The mock provider passes the conformance kit; its transport is the MockBackend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import llmplex
from llmplex import errors
from llmplex.providers.mock import MockBackend
from llmplex.testing import FakeError, ProviderConformanceTests, Reply
from llmplex.testing.replies import ERROR_KINDS
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall, json_arguments

_STATUS_ERRORS: dict[str, type[errors.LLMAPIError]] = {
    "bad_request": errors.LLMBadRequestError,
    "authentication": errors.LLMAuthenticationError,
    "forbidden": errors.LLMAuthenticationError,
    "not_found": errors.LLMBadRequestError,
    "request_timeout": errors.LLMServerError,
    "conflict": errors.LLMBadRequestError,
    "too_large": errors.LLMBadRequestError,
    "unprocessable": errors.LLMBadRequestError,
    "rate_limit": errors.LLMRateLimitError,
    "quota": errors.LLMQuotaExhaustedError,
    "server": errors.LLMServerError,
    "bad_gateway": errors.LLMServerError,
    "unavailable": errors.LLMServerError,
    "overloaded": errors.LLMServerError,
}
"""The mock's "provider" raises taxonomy errors itself: each kind as the error it stands for."""


def _message(message: Mapping[str, Any]) -> SentMessage:
    calls = tuple(
        SentToolCall(c["id"], c["name"], json_arguments(c.get("arguments", "{}")))
        for c in message.get("tool_calls", ())
    )
    return SentMessage(message["role"], message.get("content") or "", calls, message.get("tool_call_id"))


def read_mock_payload(payload: Mapping[str, Any]) -> SentRequest:
    """A mock payload (core's request as plain data) in the kit's terms."""
    messages = payload["messages"]
    output = payload.get("output")
    return SentRequest(
        model=payload["model"],
        system=tuple(m.get("content") or "" for m in messages if m["role"] == "system"),
        messages=tuple(_message(m) for m in messages if m["role"] != "system"),
        tools=tuple(SentTool(t["name"], t.get("description", ""), t.get("parameters", {})) for t in payload["tools"]),
        tool_choice=payload.get("tool_choice"),
        options={k: list(v) if k == "stop" else v for k, v in payload["options"].items()},
        stream=payload.get("stream", False),
        output_schema=output["json_schema"] if output else None,
        raw=payload,
    )


class TestMockConformance(ProviderConformanceTests):
    prefix = "mock"
    model = "echo"
    supports_tools = True
    supports_streaming = True
    supports_async = True
    input_parts = frozenset({"image", "document", "audio"})
    supports_response_chains = True

    @pytest.fixture
    def transport(self, llm: llmplex.Client) -> MockBackend:
        backend: MockBackend = llm.provider_client("mock")
        return backend

    def fake_response(self, transport: MockBackend, reply: Reply) -> None:
        transport.push(
            reply.text,
            tool_calls=[c.model_dump() for c in reply.tool_calls],
            usage=reply.usage.model_dump(exclude={"total_tokens"}),
            model=reply.model,
            finish_reason=reply.finish_reason,
            delay=reply.delay,
            refusal=reply.refusal,
            response_id=reply.response_id,
        )

    def fake_error(self, transport: MockBackend, error: FakeError) -> None:
        if error.kind == "connection":
            transport.push_error(ConnectionResetError(error.message))
        elif error.kind == "timeout":
            transport.push(error.message, delay=60)
        else:
            status = ERROR_KINDS[error.kind].status
            body = {"error": error.message}
            failure = _STATUS_ERRORS[error.kind](
                error.message, status_code=status, response_body=body, headers=error.headers()
            )
            transport.push_error(failure)

    def fake_stall(self, transport: MockBackend, seconds: float) -> None:
        transport.push("too late", delay=seconds)

    def sent_payloads(self, transport: MockBackend) -> Sequence[Any]:
        return transport.calls

    def sent_requests(self, transport: MockBackend) -> Sequence[SentRequest]:
        return [read_mock_payload(p) for p in transport.calls]
