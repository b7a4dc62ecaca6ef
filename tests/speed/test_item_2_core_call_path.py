"""Issue 34 item 2: core's per-call path builds less.

A prompt string without keyword arguments becomes its ``Request`` without pydantic validating it all again
(``prompt_request``), equal to the validated one in every way; what it refuses it still refuses alike. The
direct sender works out a client's headers and aiohttp timeouts once, not per call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from llmplex.engine import request_builder
from llmplex.engine.request_builder import build_request, prompt_request
from llmplex.errors import LLMBadRequestError, LLMConfigurationError
from llmplex.http import direct, direct_sender, sdk_async_client
from llmplex.http.direct import _Target

PROMPTS = ("hi", "héllo ✓ 👋", " padded ", "x" * 10_000, "line\nbreak")


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("stream", [False, True])
def test_item_2_prompt_request_equals_the_validated_request(prompt: str, stream: bool) -> None:
    built, validated = (
        prompt_request("gpt-4o-mini", prompt, stream),
        build_request("gpt-4o-mini", prompt, stream=stream),
    )
    assert built == validated
    assert built.model_dump() == validated.model_dump()
    assert list(built.__dict__) == list(validated.__dict__)
    assert built.model_fields_set == validated.model_fields_set
    assert built.messages[0] == validated.messages[0]
    assert built.messages[0].model_fields_set == validated.messages[0].model_fields_set
    assert built.model_copy(update={"model": "m"}) == validated.model_copy(update={"model": "m"})
    assert built.provider_options is not prompt_request("gpt-4o-mini", prompt, stream).provider_options


def test_item_2_prompt_request_skips_build_request_for_a_string(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a prompt string needs no build_request")

    monkeypatch.setattr(request_builder, "build_request", refused)
    assert prompt_request("m", "hi", False).messages[0].content == "hi"


@pytest.mark.parametrize(
    ("prompt", "error"), [("", LLMConfigurationError), ("   ", LLMConfigurationError), ("a\udc80b", LLMBadRequestError)]
)
def test_item_2_prompt_request_refuses_what_build_request_refuses(prompt: str, error: type[Exception]) -> None:
    with pytest.raises(error) as fast:
        prompt_request("m", prompt, False)
    with pytest.raises(error) as slow:
        build_request("m", prompt)
    assert str(fast.value) == str(slow.value)


def test_item_2_prompt_request_of_messages_is_build_requests() -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert prompt_request("m", messages, False) == build_request("m", messages)


HEADERS = [(b"Accept", b"application/json"), (b"X-Two", b"a"), (b"x-two", b"b"), (b"Authorization", b"Bearer k")]


def test_item_2_direct_sender_works_out_each_header_list_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    merged, worked = direct._merged, []

    def counted(*args: Any) -> Any:
        worked.append(args)
        return merged(*args)

    monkeypatch.setattr(direct, "_merged", counted)

    async def run() -> list[Any]:
        http = sdk_async_client(openai)
        try:
            sender = direct_sender(http)
            assert sender is not None
            target = _Target(None, "127.0.0.1:8000")
            first = sender._items(target, list(HEADERS), b"{}")
            again = sender._items(target, list(HEADERS), b'{"a":1}')
            timeouts = {id(sender._client_timeout(5.0, 600.0, 600.0)) for _ in range(3)}
            return [first, again, len(timeouts)]
        finally:
            await http.aclose()

    first, again, distinct = asyncio.run(run())
    expected = [("host", "127.0.0.1:8000"), ("accept", "application/json"), ("x-two", "a, b")]
    expected.append(("authorization", "Bearer k"))
    assert first == [*expected, ("content-length", "2")]
    assert again == [*expected, ("content-length", "7")]
    assert len(worked) == 1
    assert distinct == 1


def test_item_2_adapt_tells_a_request_without_options_by_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    from llmplex.engine.adapt import adapt
    from llmplex.provider import Capabilities
    from llmplex.types import LLMConfig

    def compared(self: LLMConfig, other: object) -> bool:
        raise AssertionError("options compared field by field")

    capabilities = Capabilities(sampling_options=frozenset({"temperature"}))
    for request in (prompt_request("m", "hi", False), build_request("m", "hi"), build_request("m", "hi", options={})):
        monkeypatch.setattr(LLMConfig, "__eq__", compared)
        adapted = adapt(request, "p", capabilities, drop_unsupported=False)
        monkeypatch.undo()
        assert adapted.request is request


def test_item_2_a_call_copies_its_response_once_without_model_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    import llmplex
    from llmplex.engine.pipeline import _copied
    from llmplex.types import Response, Usage

    answer = Response(text="hi", model="m", usage=Usage(input_tokens=3, output_tokens=2), raw={"id": 1})
    update = {"provider": "p", "attempts": 2, "latency": 0.5, "usage": Usage(input_tokens=4)}
    fast, slow = _copied(answer, dict(update)), answer.model_copy(update=update)
    assert fast == slow
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.raw is slow.raw
    assert answer.provider == ""

    def refused(self: Response, **kwargs: Any) -> Response:
        raise AssertionError("model_copy on the call path")

    monkeypatch.setattr(Response, "model_copy", refused)
    response = llmplex.Client().complete("mock:echo", "copied once")
    assert response.provider == "mock"
    assert response.attempts == 1
    assert "copied once" in response.text


@pytest.mark.parametrize(
    ("module", "function", "good", "bad"),
    [
        ("llmplex_gemini.request", "url_model", "gemini-2.5-flash#x", "gem ini"),
        ("llmplex_azure.transport", "deployment", "prod#4o", "../x"),
    ],
)
def test_item_2_a_model_name_in_the_url_is_checked_once(
    module: str, function: str, good: str, bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    found = importlib.import_module(module)
    encode = getattr(found, function)
    encode.cache_clear()
    checked: list[str] = []
    path_segment = found.path_segment

    def counted(value: str, what: str) -> str:
        checked.append(value)
        encoded: str = path_segment(value, what)
        return encoded

    monkeypatch.setattr(found, "path_segment", counted)
    assert encode(good) == encode(good)
    assert "%23" in encode(good)
    assert len(checked) == 1
    for _ in range(2):
        with pytest.raises(LLMConfigurationError):
            encode(bad)
    assert len(checked) == 3
