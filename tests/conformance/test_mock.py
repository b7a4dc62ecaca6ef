"""The mock provider passes the conformance kit; its transport is the MockBackend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import llmplex
from llmplex import errors
from llmplex.providers.mock import MockBackend
from llmplex.testing import FakeError, ProviderConformanceTests, Reply

_STATUS_ERRORS: dict[str, tuple[type[errors.LLMAPIError], int]] = {
    "bad_request": (errors.LLMBadRequestError, 400),
    "authentication": (errors.LLMAuthenticationError, 401),
    "not_found": (errors.LLMBadRequestError, 404),
    "rate_limit": (errors.LLMRateLimitError, 429),
    "quota": (errors.LLMQuotaExhaustedError, 429),
    "server": (errors.LLMServerError, 500),
    "overloaded": (errors.LLMServerError, 503),
}


class TestMockConformance(ProviderConformanceTests):
    prefix = "mock"
    model = "echo"
    supports_tools = True
    supports_streaming = True
    supports_async = True
    supports_response_chains = True

    @pytest.fixture
    def transport(self, llm: llmplex.Client) -> MockBackend:
        backend: MockBackend = llm.provider_client("mock")
        return backend

    def fake_response(self, transport: MockBackend, reply: Reply) -> None:
        transport.push(
            reply.text,
            tool_calls=[c.model_dump() for c in reply.tool_calls],
            usage=reply.usage.model_dump(include={"input_tokens", "output_tokens"}),
            model=reply.model,
        )

    def fake_error(self, transport: MockBackend, error: FakeError) -> None:
        if error.kind == "connection":
            transport.push_error(ConnectionResetError(error.message))
        elif error.kind == "timeout":
            transport.push_error(TimeoutError(error.message))
        else:
            cls, status = _STATUS_ERRORS[error.kind]
            extra: dict[str, Any] = {"retry_after": error.retry_after} if error.kind == "rate_limit" else {}
            transport.push_error(
                cls(error.message, status_code=status, response_body={"error": error.message}, **extra)
            )

    def sent_payloads(self, transport: MockBackend) -> Sequence[Any]:
        return transport.calls
