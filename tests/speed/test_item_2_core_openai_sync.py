"""Issue 34 item 2: llmplex-openai's sync whole answer (chat, Responses, the openai-compatible presets) reads its
JSON as the async lean path does (orjson wherever that gives ``json.loads``' value, not httpx's ``Response.json``),
keeps its client's httpx timeouts (built on the first call, not on every call) and maps a failure to the SDK's error
without a generator context manager around each send; a call with a timeout of its own still sends it."""

from __future__ import annotations

import importlib
from typing import Any

import openai
import pytest
from llmplex_openai import lean

import llmplex
from tests.contract import fixtures_openai as fx
from tests.support.openai_wire import CHAT_PATH, RESPONSES_PATH, success_body
from tests.support.stream_server import Reply, StreamServer

_BODIES = {
    "chat": success_body(CHAT_PATH, {"model": "m"}, "Hello!", fx.TokenUsage()),
    "responses": success_body(RESPONSES_PATH, {"model": "m"}, "Hello!", fx.TokenUsage()),
}


def _client(url: str, api: str) -> llmplex.Client:
    return llmplex.Client(
        providers={"p": {"plugin": "openai", "base_url": f"{url}/v1", "api": api, "api_key": "sk-x"}},
        throttle={"max_attempts": 1},
    )


def _refuse_json(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(self: Any, **kwargs: Any) -> Any:
        raise AssertionError("read by Response.json")

    for name in ("httpx", "httpx2"):
        try:
            library = importlib.import_module(name)
        except ImportError:
            continue
        monkeypatch.setattr(library.Response, "json", refused)


@pytest.mark.parametrize("api", list(_BODIES))
def test_item_2_core_openai_sync_answer_read_as_the_lean_path_reads_it(
    api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[Any] = []
    request = lean._request

    def spy(*args: Any) -> Any:
        built = request(*args)
        sent.append(built.extensions["timeout"])
        return built

    def refused(http: object, request: Any) -> Any:
        raise AssertionError("a context manager around the send")

    _refuse_json(monkeypatch)
    monkeypatch.setattr(lean, "_request", spy)
    monkeypatch.setattr(lean, "_sdk_errors", refused)
    with StreamServer() as server:
        server.script(*[Reply.json(200, _BODIES[api])] * 3)
        llm = _client(server.url, api)
        try:
            answers = [llm.complete("p:m", "hi", timeout=timeout) for timeout in (None, None, 30)]
        finally:
            llm.close()
        announced = [dict(request.headers).get("x-stainless-read-timeout") for request in server.requests]
    assert [answer.text for answer in answers] == ["Hello!"] * 3
    assert answers[0].raw == answers[1].raw and type(answers[0].raw) is dict
    assert sent[0] is sent[1]  # the client's own timeouts, kept
    assert sent[2] is not sent[0] and 0 < (sent[2]["read"] or 0) <= 30  # the call's own
    assert announced[0] == announced[1] != announced[2]


def test_item_2_core_openai_sync_failure_is_the_sdks_error() -> None:
    """A refused connection is the SDK's ``APIConnectionError`` under llmplex's error, as before."""
    with StreamServer() as server:
        url = server.url
    llm = _client(url, "chat")
    try:
        with pytest.raises(llmplex.LLMError) as failed:
            llm.complete("p:m", "hi")
    finally:
        llm.close()
    assert isinstance(failed.value.__cause__, openai.APIConnectionError)


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("application/json", b'{"a": 18446744073709551616}', {"a": 18446744073709551616}),
        ("application/json; charset=utf-8", b'{"a": "\xc3\xa9"}', {"a": "\u00e9"}),
        ("text/plain", b'{"a": 1}', {"a": 1}),
        ("text/plain", b"not json", "not json"),
    ],
)
def test_item_2_core_openai_sync_answer_decoded_as_before(content_type: str, body: bytes, expected: Any) -> None:
    """A 2xx httpx answer: its JSON (json.loads' value: an integer past 64 bits stays an int), or its text when
    it is no JSON and does not say it is."""
    import httpx

    client = openai.OpenAI(api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    try:
        response = httpx.Response(200, content=body, headers={"content-type": content_type})
        assert lean._decoded(client, response) == expected
        failed = httpx.Response(
            404, content=b'{"error": {"message": "no"}}', headers={"content-type": "application/json"}
        )
        failed.request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
        with pytest.raises(openai.NotFoundError):
            lean._decoded(client, failed)
    finally:
        client.close()
