"""Issue 34 item 4: llmplex-gemini reads ``streamGenerateContent?alt=sse`` lean.

Each case runs both ways on the same local server (the SDK's ``generate_content_stream``, and the lean path:
the SDK's request, read with ``iter_sse``/``aiter_sse`` into plain data) and compares what the server received
and how the stream ended: the final response, or the error's type and message. Payloads are shaped as
https://ai.google.dev/api/generate-content documents them (``tests/plugins/gemini/wire.py`` validates each with
the SDK's own types).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types
from llmplex_gemini import hooks as gemini_hooks

import llmplex
from llmplex import LLMError
from llmplex.types import Image, Message, OutputSchema, ToolCall
from tests.plugins.gemini.wire import MODEL, stream_body
from tests.speed.gemini_stream_cases import (
    KEY,
    PNG,
    STREAMS,
    TEXT,
    WEATHER,
    _both,
    _config,
    _read,
    _script,
    client,
    read_lean,
    server,
    via,
)
from tests.support.stream_server import Reply, StreamServer

__all__ = ["client", "server", "via"]


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(STREAMS))
def test_item_4_gemini_stream_is_read_lean_as_plain_data(
    name: str,
    mode: str,
    server: StreamServer,
    client: llmplex.Client,
    via: Callable[[bool], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[type] = []
    parse = gemini_hooks.parse_chunk
    monkeypatch.setattr(gemini_hooks, "parse_chunk", lambda c, s: (seen.append(type(c)), parse(c, s))[1])
    sdk, lean = _both(client, server, via, mode, _script(server, Reply.events(stream_body(STREAMS[name]))))
    assert read_lean == _read(mode)
    assert sdk == lean and sdk[0] == "ok"
    sdk_types, lean_types = seen[: len(seen) // 2], seen[len(seen) // 2 :]
    assert set(sdk_types) == {types.GenerateContentResponse}  # the SDK path still yields its models
    assert tuple in lean_types  # no SDK model built for a chunk the parser reads as it is (a text chunk read once)
    if name == "text":
        assert set(lean_types) == {tuple} and lean[1][:3] == ("Hello!", (), "stop")
    if name == "tool calls":  # a function call: the plain dict
        assert lean_types == [tuple, dict, dict]
    if name == "safety ratings and audio usage":  # what the parser does not read goes through the SDK's model
        assert lean_types == [types.GenerateContentResponse, tuple]
    if name == "thoughts and a signature":
        assert lean[1][6][0].text == "Let me think."


REQUESTS: dict[str, dict[str, Any]] = {
    "prompt only": {},
    "system, tools and options": {
        "system": "Be brief.",
        "tools": [WEATHER],
        "tool_choice": "get_weather",
        "temperature": 0.25,
        "max_tokens": 64,
        "stop": ["END"],
        "seed": 7,
    },
    "structured output": {"output": OutputSchema(name="answer", json_schema={"type": "object"}), "top_p": 0.5},
    "thinking": {"provider_options": {"thinking_config": {"thinking_budget": 512, "include_thoughts": True}}},
    "an image and a tool round trip": {
        "prompt": [
            Message.user(["What is this?", Image.from_bytes(PNG)]),
            Message.assistant(None, (ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}'),)),
            Message.tool("c1", '{"forecast": "sunny"}'),
        ],
        "tools": [WEATHER],
    },
}


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_item_4_gemini_lean_stream_sends_the_sdks_request(
    timeout: float | None, server: StreamServer, via: Callable[[bool], None]
) -> None:
    """Same method, path and query (``?alt=sse``), headers in order (``x-goog-api-key``, ``user-agent``,
    ``x-goog-api-client``, ``x-server-timeout``...) and body bytes as the SDK's, sync and async."""
    settings = {} if timeout is None else {"timeout": timeout}
    built = llmplex.Client(_config(server.url, **settings))
    server.requests.clear()
    for mode in ("stream", "astream"):
        for request in REQUESTS.values():
            _both(built, server, via, mode, _script(server, Reply.events(stream_body(TEXT))), **request)
    built.close()
    sent = server.requests
    assert len(sent) == 4 * len(REQUESTS)
    for sdk_sent, lean_sent in zip(sent[::2], sent[1::2], strict=True):
        assert lean_sent == sdk_sent and lean_sent.body == sdk_sent.body
        assert lean_sent.path.endswith(f"/models/{MODEL}:streamGenerateContent?alt=sse")
        headers = dict(lean_sent.headers)
        assert headers["x-goog-api-key"] == KEY and "google-genai-sdk/" in headers["x-goog-api-client"]
        assert ("x-server-timeout" in headers) is (timeout is not None)
    assert read_lean == ["iter_sse"] * len(REQUESTS) + ["aiter_sse"] * len(REQUESTS)


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": "hot"},
        {"bogus_option": 1},
        {"thinking_config": {"thinking_level": "high"}},
        {"should_return_http_response": True},
    ],
)
def test_item_4_hostile_gemini_provider_options_fail_or_pass_alike(
    options: dict[str, Any], server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """Options the SDK's config model refuses fail with its validation error both ways; ones it rewrites (an
    enum in lower case) reach the wire rewritten both ways."""
    server.requests.clear()
    reply = _script(server, Reply.events(stream_body(TEXT)))
    sdk, lean = _both(client, server, via, "stream", reply, provider_options=options)
    assert sdk == lean
    if sdk[0] == "ok":
        assert server.requests[0].body == server.requests[1].body and b'"HIGH"' in server.requests[1].body
    elif "should_return_http_response" in options:  # the SDK refuses it in a stream: the lean path leaves it to it
        assert sdk[0] is LLMError and "not supported in streaming" in sdk[1]
    else:
        assert sdk[0] is LLMError and "validation error for GenerateContentConfig" in sdk[1]
