"""Issue 34 item 3: less CPU per async whole answer on the Responses, Gemini and Azure paths (and chat's).

- llmplex-gemini writes the body of a conversation of text parts at once (the same bytes as its converters,
  which ``test_item_2_gemini_lean.py`` compares with the SDK's), and its prepared call is no frozen dataclass;
- llmplex-azure's async send hands on what to await (no coroutine of its own);
- llmplex-openai's lean body works out the SDK's key order once per payload layout;
- ``DirectSender.post`` awaits aiohttp's request itself, not through ``open`` (one coroutine frame fewer).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from llmplex_azure import transport as azure_transport
from llmplex_gemini import generate, wire
from llmplex_openai import lean
from openai import AsyncOpenAI
from openai.resources.chat.completions.completions import Completions

import llmplex
from llmplex.http.direct import DirectSender
from tests.contract import fixtures_openai as fx
from tests.support.openai_wire import CHAT_PATH, success_body
from tests.support.stream_server import Reply, StreamServer

_TEXTS = ["", "Say hello.", 'é "quoted" \\ \n\t', "\ud800 lone", "日本語 😀", "\x00\x1f"]


def _no_converters(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    used: list[object] = []
    real = wire._list

    def spy(*args: Any, **kwargs: Any) -> Any:
        used.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(wire, "_list", spy)
    return used


@pytest.mark.parametrize("config", [None, {}, {"automatic_function_calling": {"disable": True}}])
def test_item_3_core_gemini_text_body_is_written_without_the_converters(
    monkeypatch: pytest.MonkeyPatch, config: dict[str, Any] | None
) -> None:
    used = _no_converters(monkeypatch)
    for text in _TEXTS:
        contents = [
            {"role": "user", "parts": [{"text": text}]},
            {"parts": [{"text": "a"}, {"text": text}], "role": "model"},
        ]
        written: dict[str, Any] = {"contents": [{"parts": turn["parts"], "role": turn["role"]} for turn in contents]}
        if config:
            written["generationConfig"] = {}
        assert wire.body({"model": "m", "contents": contents, "config": config}) == json.dumps(written).encode()
    assert used == []


@pytest.mark.parametrize(
    "contents",
    [
        [{"role": "user", "parts": [{"text": "a", "thought": True}]}],
        [{"role": "user", "parts": [{"inline_data": {"data": b"x", "mime_type": "image/png"}}]}],
        [{"role": "user", "parts": [{"text": None}]}],
        [{"role": "user", "parts": []}],
        [],
    ],
)
def test_item_3_core_gemini_other_bodies_still_go_through_the_converters(
    monkeypatch: pytest.MonkeyPatch, contents: list[dict[str, Any]]
) -> None:
    used = _no_converters(monkeypatch)
    wire.body({"model": "m", "contents": contents, "config": None})
    assert used


def test_item_3_core_gemini_text_body_with_options_goes_through_the_converters(monkeypatch: pytest.MonkeyPatch) -> None:
    used = _no_converters(monkeypatch)
    payload = {"model": "m", "contents": [{"role": "user", "parts": [{"text": "a"}]}], "config": {"temperature": 1}}
    body = wire.body(payload)
    assert used
    written = {"contents": [{"parts": [{"text": "a"}], "role": "user"}], "generationConfig": {"temperature": 1.0}}
    assert body == json.dumps(written).encode()


def test_item_3_core_gemini_lean_call_is_no_frozen_dataclass() -> None:
    """A frozen dataclass sets each field with ``object.__setattr__``: on every call, for a call made once."""
    assert not generate.LeanCall.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_item_3_core_azure_async_send_is_no_coroutine_of_its_own() -> None:
    assert not inspect.iscoroutinefunction(azure_transport.asend)


def test_item_3_core_openai_body_orders_a_layout_once(monkeypatch: pytest.MonkeyPatch) -> None:
    orderings: list[object] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        orderings.append(args)
        return sorted(*args, **kwargs)

    wire_ = lean._wire(AsyncOpenAI(api_key="sk-x", base_url="http://127.0.0.1:9/v1"), CHAT_PATH, Completions.create)
    monkeypatch.setattr(lean, "sorted", spy, raising=False)
    payloads = [
        {"model": "m", "messages": [{"role": "user", "content": str(i)}], "zz": i, "temperature": 0.5} for i in range(3)
    ]
    bodies = [wire_.body(payload) for payload in payloads]
    assert len(orderings) == 1
    for i, body in enumerate(bodies):  # the method's parameters in its order, extra keys after
        expected = {"messages": [{"role": "user", "content": str(i)}], "model": "m", "temperature": 0.5, "zz": i}
        assert body == json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode()
    in_order = {"messages": [], "model": "m"}
    assert wire_.body(in_order) == b'{"messages":[],"model":"m"}'
    assert wire_.body({"model": "m", "messages": []}) == b'{"messages":[],"model":"m"}'


def test_item_3_core_direct_post_awaits_aiohttp_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_open(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("post went through open")

    monkeypatch.setattr(DirectSender, "open", no_open)
    answer = success_body(CHAT_PATH, {"model": "m"}, "Hello!", fx.TokenUsage())
    with StreamServer() as server:
        server.script(Reply.json(200, answer))
        llm = llmplex.Client(
            providers={"p": {"plugin": "openai", "base_url": f"{server.url}/v1", "api": "chat", "api_key": "sk-x"}},
            throttle={"max_attempts": 1},
        )

        async def call() -> llmplex.Response:
            try:
                return await llm.acomplete("p:m", "hi")
            finally:
                await llm.aclose()

        assert asyncio.run(call()).text == "Hello!"
