"""What the lean-transport tests of llmplex-anthropic share: the instance, the payloads, the recording fixtures
and the failure facts compared between the lean path and the SDK."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.resources.messages import messages as sdk_messages
from llmplex_anthropic.clients import create_client
from llmplex_anthropic.settings import AnthropicSettings

import llmplex
from llmplex import LLMError
from tests.plugins.anthropic.fake_http import FakeHTTP
from tests.plugins.anthropic.wire import MODEL

DEPRECATED_MODEL = next(iter(vars(sdk_messages)["DEPRECATED_MODELS"]))
"""A model the installed SDK warns about (its list changes between releases: anthropic 2.13 dropped claude-2.1)."""

KEY = "sk-ant-lean-test-0123456789abcdef"
SETTINGS = AnthropicSettings(api_key=KEY)
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather of a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
PAYLOADS: dict[str, dict[str, Any]] = {
    "plain": {"model": MODEL, "messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 4096},
    "everything": {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": "Météo à Paris ? 天気 \u2028 🌦"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "24.5C"}]},
        ],
        "max_tokens": 300,
        "stop_sequences": ["\n\nHuman:"],
        "system": "Be brief.",
        "tools": [WEATHER_TOOL],
        "tool_choice": {"type": "auto"},
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {}}}},
        "metadata": {"user_id": "u-1"},
    },
}


@pytest.fixture
def raw_headers(fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[bytes, bytes]]]:
    """The headers of each request that reached the fake network, as bytes on the wire (case and order kept)."""
    seen: list[list[tuple[bytes, bytes]]] = []
    answer = fake_http.answer

    def recording(request: httpx2.Request) -> httpx2.Response:
        seen.append(list(request.headers.raw))
        return answer(request)

    monkeypatch.setattr(fake_http, "answer", recording)
    return seen


@pytest.fixture
def sync_client() -> Iterator[anthropic.Anthropic]:
    client = create_client(SETTINGS)
    yield client
    client.close()


def sdk_timeout(timeout: float | None) -> dict[str, Any]:
    return {} if timeout is None else {"timeout": timeout}


def raised(call: Any) -> BaseException:
    with pytest.raises(anthropic.AnthropicError) as caught:
        call()
    return caught.value


def facts(error: LLMError) -> dict[str, Any]:
    found = {
        "type": type(error),
        "message": str(error),
        "retryable": error.retryable,
        "context": error.context,
        "cause": type(error.cause),
    }
    if isinstance(error, llmplex.LLMAPIError):
        found |= {"status": error.status_code, "body": error.response_body, "headers": error.headers}
        found |= {"request_id": error.request_id, "retry_after": getattr(error, "retry_after", None)}
    return found
