"""Issue 34 item 3: llmplex-openai's lean path reads a whole answer's JSON with orjson (about a third of
``json.loads``' CPU on a chat completion) wherever orjson gives ``json.loads``' value, and with ``json.loads``
everywhere else: an integer past 64 bits (orjson makes it a float), a BOM or another encoding, NaN, a lone
surrogate, a document that is not JSON (the same error as before)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llmplex_openai import lean

from tests.support.typed_json import typed

_ANSWER = json.dumps(
    {
        "id": "chatcmpl-bench0000000000000000000000000",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Héllo ✓"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16, "score": 0.25},
    },
    ensure_ascii=False,
).encode()
_DOCUMENTS: dict[str, bytes] = {
    "an integer past 64 bits": b'{"n": 18446744073709551616}',
    "a negative one": b"[1,-9223372036854775809]",
    "one after a newline": b'{"n":\n99999999999999999999999}',
    "one alone": b"99999999999999999999",
    "the largest 64-bit integer": b"[9223372036854775807, -9223372036854775808]",
    "digits in an id": b'{"id": "x-99999999999999999999999"}',
    "a BOM": b'\xef\xbb\xbf{"a": 1}',
    "UTF-16": '{"a": "é"}'.encode("utf-16"),
    "NaN": b'{"a": NaN, "b": Infinity}',
    "a lone surrogate": b'"\\ud800"',
    "an infinite number": b"[1e400]",
}
_REFUSED = {"not JSON": b"<html>no</html>", "cut short": b'{"a": [1, 2', "empty": b""}


def test_item_3_core_openai_answer_json_read_by_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = json.loads(_ANSWER)

    def refused(content: Any) -> Any:
        raise AssertionError("read by json.loads")

    monkeypatch.setattr(lean.json, "loads", refused)
    assert typed(lean._json(_ANSWER)) == typed(expected)


@pytest.mark.parametrize("name", list(_DOCUMENTS))
def test_item_3_core_openai_answer_json_is_json_loads_value(name: str) -> None:
    assert typed(lean._json(_DOCUMENTS[name])) == typed(json.loads(_DOCUMENTS[name]))


@pytest.mark.parametrize("name", list(_REFUSED))
def test_item_3_core_openai_answer_json_refused_as_before(name: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(_REFUSED[name])
    with pytest.raises(json.JSONDecodeError) as got:
        lean._json(_REFUSED[name])
    assert str(got.value) == str(expected.value)
