"""Issue 34 item 4: a model id in a URL (Bedrock's, and every plugin's through ``llmplex.http.check_name``) is
read character by character once per id (15 µs for a 40-character id), not on every call; an id it refuses is
refused on every call with the same error, and the ids kept are bounded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llmplex_bedrock import request as bedrock_request
from llmplex_bedrock.settings import BedrockSettings

from llmplex import Message
from llmplex.errors import LLMConfigurationError
from llmplex.http import segments
from llmplex.types import Request

HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each id whose characters are read, with no id kept before the test."""
    asked: list[str] = []
    category = segments.unicodedata.category

    def counted(character: str) -> str:
        asked.append(character)
        return category(character)

    segments._problem.cache_clear()
    monkeypatch.setattr(segments.unicodedata, "category", counted)
    yield asked
    segments._problem.cache_clear()


def _format(name: str, **settings: Any) -> dict[str, Any]:
    request = Request(model=name, messages=(Message.user("hi"),))
    return bedrock_request.format_request(request, BedrockSettings(region="us-east-1", **settings))


def test_item_4_bedrock_model_id_checked_once_per_id(read: list[str]) -> None:
    """Three calls on one model and two on another (one named by the settings): each id read once."""
    for _ in range(3):
        assert _format(HAIKU)["modelId"] == HAIKU
    for _ in range(2):
        assert _format(HAIKU, model="amazon.nova-micro-v1:0")["modelId"] == "amazon.nova-micro-v1:0"
    assert "".join(read) == HAIKU + "amazon.nova-micro-v1:0"


@pytest.mark.parametrize("model", ["", "a/../b", "anthropic claude", "nova\x00"])
def test_item_4_bedrock_refused_model_id_refused_every_time(read: list[str], model: str) -> None:
    """An id ``check_name`` refuses raises its error, naming what it is, on each call."""
    messages = set()
    for _ in range(2):
        with pytest.raises(LLMConfigurationError) as raised:
            _format(model)
        messages.add(str(raised.value))
    assert len(messages) == 1 and "Bedrock model id" in messages.pop()


def test_item_4_bedrock_model_ids_kept_are_bounded() -> None:
    segments._problem.cache_clear()
    for index in range(1_000):
        segments.check_name(f"model-{index}", "model")
    assert segments._problem.cache_info().currsize == 256
    segments._problem.cache_clear()
