"""Issue 34 item 4: the end of a Gemini stream looks for thoughts and signatures among the answer's parts in one
loop, with no function call per part (every part of the answer is read there). What it finds is as before: the
parts, whole, as one opaque ``ReasoningPart`` when any is a thought or carries a signature, else nothing."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.genai import types
from llmplex_gemini import thoughts

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
