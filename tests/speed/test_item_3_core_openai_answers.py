"""Issue 34 item 3: the whole answers of the openai plugin's lean path (chat, Responses, the openai-compatible
presets, Azure) and of Gemini's plain path cost less CPU.

``Response.of`` takes ``refusal`` and ``reasoning`` only when given (left out, they are not among the answer's
fields set, as with the constructor), and chat, Responses and Gemini's plain answers are built with it: without
pydantic's validation when every value has its field's type, equal in every way to the validated answer.
``LLMConfig.set_options`` answers a config with nothing set at once; a preset works out its refused options only
when the call sets one. Azure's direct post keeps its client's timeouts and needs no context manager a call.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from llmplex_azure import transport as azure_transport
from llmplex_gemini.plain import parse_response as parse_gemini
from llmplex_openai.chat import parse_chat_response
from llmplex_openai.responses import parse_responses_response
from llmplex_openai_compatible.quirks import format_request
from llmplex_openai_compatible.settings import CompatibleSettings
from openai import AsyncAzureOpenAI
from openai.resources.chat.completions.completions import Completions
from pydantic import ValidationError

import llmplex
from llmplex.types import LLMConfig, Response, ToolCall, Usage
from llmplex.types.request import plain_request
from tests.contract import fixtures_openai as fx
from tests.providers_next.test_item_3_azure_openai import _clean_environment
from tests.speed.direct_posts import spy_direct_posts
from tests.support.openai_wire import CHAT_PATH, RESPONSES_PATH, success_body
from tests.support.stream_server import Reply, StreamServer

__all__ = ["_clean_environment"]  # autouse: no Azure variable of the environment reaches these clients

_SEVEN = {"text", "tool_calls", "finish_reason", "usage", "model", "response_id", "raw"}
_VALUES: dict[str, Any] = {
    "text": "Hello",
    "tool_calls": (ToolCall(id="c1", name="f", arguments="{}"),),
    "finish_reason": "tool_calls",
    "usage": Usage.of({"input_tokens": 9, "output_tokens": 7}),
    "model": "m",
    "response_id": "r1",
    "raw": {"id": "r1"},
}


def _same(built: Response, validated: Response) -> None:
    assert built == validated
    assert list(built.__dict__.items()) == list(validated.__dict__.items())
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)


def _unvalidated(monkeypatch: pytest.MonkeyPatch) -> None:
    def validating(self: Response, **data: Any) -> None:
        raise AssertionError("validated")

    monkeypatch.setattr(Response, "__init__", validating)


def _given(response: Response) -> Response:
    """The validated answer of the fields ``response`` was given."""
    return Response(**{name: getattr(response, name) for name in response.model_fields_set})


@pytest.mark.parametrize("extra", [{}, {"refusal": None}, {"reasoning": ()}, {"refusal": "no", "reasoning": ()}])
def test_item_3_core_response_of_sets_only_the_fields_given(
    extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    validated = Response(**_VALUES, **extra)
    _unvalidated(monkeypatch)
    built = Response.of(**_VALUES, **extra)
    _same(built, validated)
    assert built.model_fields_set == _SEVEN | extra.keys()


@pytest.mark.parametrize("odd", [{"model": None}, {"response_id": 7}, {"finish_reason": "bored"}])
def test_item_3_core_response_of_without_refusal_refuses_what_validation_refuses(odd: dict[str, Any]) -> None:
    values = {**_VALUES, **odd}
    with pytest.raises(ValidationError) as expected:
        Response(**values)
    with pytest.raises(ValidationError) as got:
        Response.of(**values)
    assert got.value.errors(include_url=False) == expected.value.errors(include_url=False)


def test_item_3_core_response_of_without_refusal_validates_a_list_of_calls() -> None:
    values = {**_VALUES, "tool_calls": [ToolCall(id="c1", name="f")]}
    built = Response.of(**values)
    _same(built, Response(**values))
    assert built.model_fields_set == _SEVEN


_USAGE = fx.TokenUsage()


def _decoded(path: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(success_body(path, {"model": "m"}, "Hello!", _USAGE))
    return body


_GEMINI = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "Hello!"}]}, "finishReason": "STOP"}],
    "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6},
    "modelVersion": "gemini-x",
    "responseId": "g1",
}
_PARSERS: dict[str, tuple[Callable[[], Response], set[str]]] = {
    "chat": (lambda: parse_chat_response(_decoded(CHAT_PATH), plain_request("m", "hi", False)), _SEVEN),
    "responses": (
        lambda: parse_responses_response(_decoded(RESPONSES_PATH), plain_request("m", "hi", False)),
        _SEVEN | {"reasoning"},
    ),
    "gemini": (
        lambda: parse_gemini(json.loads(json.dumps(_GEMINI)), plain_request("m", "hi", False)),
        _SEVEN | {"reasoning"},
    ),
}


@pytest.mark.parametrize("name", list(_PARSERS))
def test_item_3_core_whole_answer_is_not_validated_again(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parse, fields = _PARSERS[name]
    _unvalidated(monkeypatch)
    built = parse()
    monkeypatch.undo()
    assert built.text == "Hello!"
    assert built.model_fields_set == fields  # the fields the constructor was given before
    _same(built, _given(built))


def test_item_3_core_chat_answer_with_odd_values_is_validated_as_before() -> None:
    body = _decoded(CHAT_PATH)
    body["id"] = 7
    with pytest.raises(ValidationError):
        parse_chat_response(body, plain_request("m", "hi", False))


def _comprehensions(run: Any) -> list[str]:
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "<dictcomp>":
            seen.append(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def test_item_3_core_set_options_of_nothing_set_is_answered_at_once() -> None:
    config = LLMConfig()
    assert _comprehensions(config.set_options) == []
    first = config.set_options()
    first["temperature"] = 1.0  # each call's own dict
    assert config.set_options() == {} == config.model_dump(exclude_none=True)


@pytest.mark.parametrize(
    "given", [{"temperature": 0.0}, {"max_tokens": 5, "stop": ("x",)}, {"seed": 0, "reasoning_effort": "low"}]
)
def test_item_3_core_set_options_are_the_ones_given(given: dict[str, Any]) -> None:
    config = LLMConfig(**given)
    assert config.set_options() == config.model_dump(exclude_none=True) == given


def test_item_3_core_preset_works_out_its_refusals_only_for_a_set_option(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = CompatibleSettings(base_url="http://127.0.0.1:1/v1", unsupported_options=frozenset({"seed"}))
    asked: list[str] = []
    refused = CompatibleSettings.refused

    def counting(self: CompatibleSettings, model: str) -> frozenset[str]:
        asked.append(model)
        return refused(self, model)

    monkeypatch.setattr(CompatibleSettings, "refused", counting)
    payload = format_request(plain_request("m", "hi", False), settings)
    assert payload == {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert asked == []
    with_seed = plain_request("m", "hi", False).model_copy(update={"config": LLMConfig(seed=1)})
    with pytest.raises(llmplex.LLMConfigurationError, match="'seed'"):
        format_request(with_seed, settings)
    assert asked == ["m"]


_AZURE_PATH = "/openai/deployments/m/chat/completions?api-version=2024-10-21"
_ANSWER = success_body(CHAT_PATH, {"model": "m"}, "Hello!", _USAGE)


def test_item_3_core_azure_direct_post_keeps_its_clients_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    posted = spy_direct_posts(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.json(200, _ANSWER)] * 3)
        llm = llmplex.Client(providers={"p": {"plugin": "azure", "endpoint": server.url, "api_key": "azk"}})

        async def calls() -> list[llmplex.Response]:
            try:
                return [await llm.acomplete("p:m", "hi", throttle={"max_attempts": 1}) for _ in range(3)]
            finally:
                await llm.aclose()

        answers = asyncio.run(calls())
        paths = [request.path for request in server.requests]
    assert [answer.text for answer in answers] == ["Hello!"] * 3
    assert paths == [_AZURE_PATH] * 3
    assert len(posted) == 3 and posted[0] is posted[1] is posted[2]


def test_item_3_core_azure_path_and_key_follow_the_client() -> None:
    """The deployment path follows a base URL set on the client, and a key changed on it leaves the lean path
    (its template carries the old key)."""

    async def check() -> None:
        client = AsyncAzureOpenAI(api_key="k1", azure_endpoint="http://127.0.0.1:9", api_version="2024-10-21")
        try:
            assert azure_transport._chat_path(client, "d") == "/deployments/d/chat/completions"
            path = azure_transport._chat_path(client, "d")
            method = Completions.create
            assert azure_transport._lean(client, path, method)
            client.api_key = "k2"
            assert not azure_transport._lean(client, path, method)
            client.base_url = "http://127.0.0.1:9/openai/deployments/x"
            assert azure_transport._chat_path(client, "d") == "/chat/completions"
        finally:
            await client.close()

    asyncio.run(check())


def test_item_3_core_async_hooks_are_no_coroutines_of_their_own() -> None:
    """The async hooks of the lean paths hand on what to await: one coroutine frame fewer on every resumption of
    an async call (chat, Responses, the presets, Azure, Anthropic, Gemini)."""
    import inspect

    from llmplex_anthropic import hooks as anthropic_hooks
    from llmplex_azure import plugin as azure_plugin
    from llmplex_gemini import hooks as gemini_hooks
    from llmplex_openai import plugin as openai_plugin
    from llmplex_openai_compatible import plugin as compatible_plugin

    for module in (openai_plugin, compatible_plugin, azure_plugin, anthropic_hooks, gemini_hooks):
        assert not inspect.iscoroutinefunction(module.llmplex_acall), module.__name__
