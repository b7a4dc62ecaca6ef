"""Issue 34 item 3: llmplex-anthropic's lean whole answer is read as the SDK reads it (``json.loads``' value, by
orjson only where that gives the same value: ``llmplex.http.json_answer``). orjson reads an integer past 64 bits as
a float, so a tool's input holding one became ``1.8446744073709552e+19`` in the call's arguments."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest

import llmplex
from llmplex.http.json_answer import json_value
from tests.support.stream_server import Reply, StreamServer
from tests.support.typed_json import typed

KEY = "sk-ant-answer-json-0a1b2c3d4e5f6071"
INPUT = b'{"n": 18446744073709551616, "m": -9223372036854775809, "small": 7}'
MESSAGE = (
    b'{"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [{"type": "tool_use", '
    b'"id": "toolu_1", "name": "count", "input": ' + INPUT + b'}], "stop_reason": "tool_use", '
    b'"stop_sequence": null, "usage": {"input_tokens": 9, "output_tokens": 7}}'
)


def _llm(root: str) -> llmplex.Client:
    return llmplex.Client(
        providers={"p": {"plugin": "anthropic", "base_url": root, "api_key": KEY}}, throttle={"max_attempts": 1}
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_item_3_anthropic_answer_keeps_an_integer_past_64_bits_whole(mode: str) -> None:
    with StreamServer() as server:
        server.script(Reply.json(200, MESSAGE))
        llm = _llm(server.url)
        if mode == "sync":
            response = llm.complete("p:m", "hi")
        else:

            async def call() -> llmplex.Response:
                try:
                    return await llm.acomplete("p:m", "hi")
                finally:
                    await llm.aclose()

            response = asyncio.run(call())
    (tool_call,) = response.tool_calls
    assert (
        tool_call.arguments
        == json.dumps(json.loads(INPUT))
        == '{"n": 18446744073709551616, "m": -9223372036854775809, "small": 7}'
    )


def test_item_3_json_value_reads_by_the_fast_decoder_where_it_gives_json_loads_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[bytes] = []

    def fast(content: bytes) -> Any:
        read.append(content)
        return orjson.loads(content)

    plain = b'{"id": "msg99999999999999999999999", "n": [922337203685477580, -922337203685477580, 0.5]}'
    assert typed(json_value(plain, fast)) == typed(json.loads(plain)) and read == [plain]
    read.clear()
    assert typed(json_value(MESSAGE, fast)) == typed(json.loads(MESSAGE)) and read == []
    with pytest.raises(json.JSONDecodeError) as got:
        json_value(b'{"a": [1, 2', fast)
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(b'{"a": [1, 2')
    assert str(got.value) == str(expected.value)
