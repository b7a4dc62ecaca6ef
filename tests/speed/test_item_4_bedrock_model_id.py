"""Issue 34 item 4: a Bedrock request's model id is checked by ``llmplex.http.check_name`` once per id (it reads
every character: 15 µs for a 40-character id, on every call), not on every call; an id it refuses is refused on
every call with the same error, and the ids kept are bounded."""

from __future__ import annotations

from typing import Any

import pytest
from llmplex_bedrock import request as bedrock_request
from llmplex_bedrock.settings import BedrockSettings

from llmplex import Message
from llmplex.errors import LLMConfigurationError
from llmplex.types import Request

HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each id ``check_name`` is asked about, with no id accepted before the test."""
    asked: list[str] = []
    check = bedrock_request.check_name

    def counted(value: str, what: str) -> str:
        asked.append(value)
        return check(value, what)

    monkeypatch.setattr(bedrock_request, "check_name", counted)
    monkeypatch.setattr(bedrock_request, "_ACCEPTED", set())
    return asked


def _format(name: str, **settings: Any) -> dict[str, Any]:
    request = Request(model=name, messages=(Message.user("hi"),))
    return bedrock_request.format_request(request, BedrockSettings(region="us-east-1", **settings))


def test_item_4_bedrock_model_id_checked_once_per_id(checked: list[str]) -> None:
    """Three calls on one model and two on another (one named by the settings): each id checked once."""
    for _ in range(3):
        assert _format(HAIKU)["modelId"] == HAIKU
    for _ in range(2):
        assert _format(HAIKU, model="amazon.nova-micro-v1:0")["modelId"] == "amazon.nova-micro-v1:0"
    assert checked == [HAIKU, "amazon.nova-micro-v1:0"]


@pytest.mark.parametrize("model", ["", "a/../b", "anthropic claude", "nova\x00"])
def test_item_4_bedrock_refused_model_id_refused_every_time(checked: list[str], model: str) -> None:
    """An id ``check_name`` refuses raises its error on each call and is never kept."""
    messages = set()
    for _ in range(2):
        with pytest.raises(LLMConfigurationError) as raised:
            _format(model)
        messages.add(str(raised.value))
    assert len(messages) == 1 and "Bedrock model id" in messages.pop()
    assert checked == [model, model] and not bedrock_request._ACCEPTED


def test_item_4_bedrock_model_ids_kept_are_bounded(checked: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``_KEPT`` ids the set starts again: an id dropped is checked again."""
    monkeypatch.setattr(bedrock_request, "_KEPT", 2)
    for model in ("m1", "m2", "m3", "m1"):
        _format(model)
    assert len(bedrock_request._ACCEPTED) <= 2 and checked == ["m1", "m2", "m3", "m1"]
