"""Issue 34 item 4: the end of a Gemini stream reads the answer's parts for its reasoning only when a chunk had a
thought or a signature (noted as each chunk is read), and then in one loop with no function call per part. What
it finds is as before: the parts, whole, as one opaque ``ReasoningPart`` when any is a thought or carries a
signature, else nothing; the same from plain chunks as from the SDK's models."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.genai import types
from llmplex_gemini import streaming, thoughts

from llmplex.types import Message, Request, StreamState

SIGNATURE = base64.b64encode(b"signed").decode()


def _variants() -> list[list[dict[str, Any]]]:
    texts = [{"text": f"w{i} "} for i in range(6)]
    found: list[list[dict[str, Any]]] = [texts, [], [{"text": ""}], [{"text": "x", "thought": False}]]
    for at in (0, 3, 5):
        found.append([*texts[:at], {"text": "hm", "thought": True}, *texts[at:]])
        found.append([*texts[:at], {"text": "signed", "thoughtSignature": SIGNATURE}, *texts[at:]])
    found.append([*texts, {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": SIGNATURE}])
    found.append([{"text": "x", "thoughtSignature": ""}, {"text": "y", "thought": None}])
    return found


def _expected(parts: list[Any]) -> Any:
    """The rule: carried when a part is a thought or has a signature (a non-empty one)."""
    if type(parts[0] if parts else None) is dict:
        carried = any(part.get("thought") or part.get("thoughtSignature") for part in parts)
    else:
        carried = any(part.thought or part.thought_signature for part in parts)
    return carried


@pytest.mark.parametrize("parts", _variants(), ids=repr)
def test_item_4_gemini_reasoning_of_plain_and_sdk_parts(parts: list[dict[str, Any]]) -> None:
    sdk = [types.Part.model_validate(part) for part in parts]
    for given in (parts, sdk, iter(parts)):
        reasoning = thoughts.reasoning_of(given)
        assert (reasoning is not None) is _expected(parts if given is not sdk else sdk)
        if reasoning is not None:
            assert reasoning.format == thoughts.FORMAT
            assert reasoning.data["parts"] == [part.model_dump(mode="json", exclude_none=True) for part in sdk]
            assert reasoning.text == "".join(part.text or "" for part in sdk if part.thought)


def test_item_4_gemini_stream_end_makes_no_call_per_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """No function is called per part to find that nothing is carried (one was, ``_carried``, for every part)."""

    def called(part: Any) -> bool:
        raise AssertionError("a call per part")

    monkeypatch.setattr(thoughts, "_carried", called, raising=False)
    parts = [{"text": f"w{i} "} for i in range(32)]
    assert thoughts.reasoning_of(parts) is None
    assert thoughts.reasoning_of([types.Part(text=f"w{i} ") for i in range(32)]) is None


def _stream(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One chunk per part, the last with the finish reason."""
    chunks = []
    for index, part in enumerate(parts):
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if index == len(parts) - 1:
            candidate["finishReason"] = "STOP"
        chunks.append({"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r"})
    return chunks


@pytest.mark.parametrize("parts", [parts for parts in _variants() if parts], ids=repr)
def test_item_4_gemini_stream_reasoning_is_the_sdk_models(parts: list[dict[str, Any]]) -> None:
    request = Request(model="gemini-2.5-flash", messages=(Message.user("hi"),))
    plain_state, sdk_state = StreamState(request=request), StreamState(request=request)
    for chunk in _stream(parts):
        fast = streaming.parse_chunk(chunk, plain_state)
        assert fast == streaming.parse_chunk(types.GenerateContentResponse.model_validate(chunk), sdk_state)
    reasoning = [event for event in fast if event.type == "reasoning"]
    assert len(reasoning) == int(_expected(parts))


def test_item_4_gemini_stream_without_thoughts_skips_the_parts_at_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream with no thought and no signature does not read its parts again at its end (it did, every stream)."""

    def read(parts: Any) -> Any:
        raise AssertionError("the parts were read again")

    monkeypatch.setattr(streaming, "reasoning_of", read)
    request = Request(model="gemini-2.5-flash", messages=(Message.user("hi"),))
    for parse in (lambda chunk: chunk, types.GenerateContentResponse.model_validate):
        state = StreamState(request=request)
        events = [event for chunk in _stream(_variants()[0]) for event in streaming.parse_chunk(parse(chunk), state)]
        assert events[-1].type == "finish" and not [event for event in events if event.type == "reasoning"]
