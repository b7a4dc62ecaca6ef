"""Issue 16 item 6: llmplex-openai works at both ends of the openai SDK range it declares (2.x and 3.x).

These tests go through a real HTTP server on 127.0.0.1 (not a mock of one HTTP
library: openai 3 sends through ``httpx2``, which respx does not patch), so
they run unchanged at either end; tox env ``sdk-ranges`` runs them, with the
plugin's own and contract tests, at the lowest and the newest SDK.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import Any

import pytest
from packaging.requirements import Requirement

import llmplex
from tests.support.fault_server import Fault, FaultServer

API_KEY = "sk-sdk-range-0123456789abcdef"
MODES = ("complete", "acomplete", "stream", "astream")


def _client(server: FaultServer, api: str) -> llmplex.Client:
    instance = {"plugin": "openai", "base_url": server.url, "api": api, "api_key": API_KEY}
    return llmplex.Client({"providers": {"ranged": instance}}, throttle={"max_attempts": 1})


def _run(client: llmplex.Client, mode: str, **kwargs: Any) -> llmplex.Response:
    model = "ranged:gpt-4o-mini"
    if mode == "complete":
        return client.complete(model, "hi", **kwargs)
    if mode == "acomplete":
        return asyncio.run(client.acomplete(model, "hi", **kwargs))

    async def drain() -> list[llmplex.StreamEvent]:
        return [event async for event in client.astream(model, "hi", **kwargs)]

    events = list(client.stream(model, "hi", **kwargs)) if mode == "stream" else asyncio.run(drain())
    final = events[-1].response
    assert final is not None
    return final


def test_item_6_installed_openai_sdk_is_inside_the_declared_range() -> None:
    declared = [Requirement(r) for r in importlib.metadata.requires("llmplex-openai") or []]
    (openai_req,) = [r for r in declared if r.name == "openai"]
    installed = importlib.metadata.version("openai")
    assert openai_req.specifier.contains(installed), f"openai {installed} is outside {openai_req.specifier}"
    assert openai_req.specifier.contains("3.0.0") and openai_req.specifier.contains("2.17.0")


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("mode", MODES)
def test_item_6_text_answer_at_this_sdk_version(fault_server: FaultServer, api: str, mode: str) -> None:
    fault_server.enqueue(Fault.ok("Bonjour tout le monde"))
    response = _run(_client(fault_server, api), mode, temperature=0, max_tokens=20)
    assert response.text == "Bonjour tout le monde"
    assert response.usage.input_tokens > 0 and response.provider == "ranged"
    (sent,) = fault_server.requests
    assert sent.path == ("/v1/chat/completions" if api == "chat" else "/v1/responses")
    assert sent.body["model"] == "gpt-4o-mini" and sent.body["temperature"] == 0
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.headers.get("x-stainless-retry-count") == "0"  # retries are core's, not the SDK's
    assert bool(sent.body.get("stream")) == mode.endswith("stream")


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.rate_limit(retry_after=1), llmplex.LLMRateLimitError),
        (Fault.server_error(503), llmplex.LLMServerError),
        (Fault.malformed_json(), llmplex.LLMServerError),
    ],
)
def test_item_6_errors_are_classified_at_this_sdk_version(
    fault_server: FaultServer, fault: Fault, error: type[llmplex.LLMError]
) -> None:
    fault_server.enqueue(fault)
    with pytest.raises(error) as caught:
        _run(_client(fault_server, "chat"), "complete")
    assert API_KEY not in str(caught.value)
    assert fault_server.request_count == 1
