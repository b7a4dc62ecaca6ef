"""Issue 34 item 3: llmplex-openai reads the decoded JSON of an answer's usage without an abstract ``Mapping``
check for each of its counts (seven per usage, on every whole answer of chat, Responses, the openai-compatible
presets and Azure), and reads it as before: the same ``Usage`` as from the SDK's models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llmplex_openai import usage as usage_module
from llmplex_openai.usage import core_usage
from openai.types import CompletionUsage
from openai.types.responses import ResponseUsage

_CHAT: dict[str, dict[str, Any]] = {
    "the API's": {
        "prompt_tokens": 9,
        "completion_tokens": 7,
        "total_tokens": 16,
        "prompt_tokens_details": {"cached_tokens": 2, "audio_tokens": 1},
        "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": 1},
    },
    "counts only": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16},
    "details null": {
        "prompt_tokens": 9,
        "completion_tokens": 7,
        "total_tokens": 16,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    },
}
_RESPONSES: dict[str, dict[str, Any]] = {
    "the API's": {
        "input_tokens": 9,
        "output_tokens": 7,
        "total_tokens": 16,
        "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 5},
    },
}


class _Refused(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        raise AssertionError("an abstract Mapping check")


class _NoMapping(metaclass=_Refused):
    """Stands for ``Mapping``: any ``isinstance`` against it fails the test."""


@pytest.mark.parametrize("name", list(_CHAT))
def test_item_3_core_openai_chat_usage_read_without_mapping_checks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    body = json.loads(json.dumps(_CHAT[name]))
    expected = core_usage(CompletionUsage.model_validate(body))
    monkeypatch.setattr(usage_module, "Mapping", _NoMapping)
    got = core_usage(body)
    assert got == expected and got.model_fields_set == expected.model_fields_set


@pytest.mark.parametrize("name", list(_RESPONSES))
def test_item_3_core_openai_responses_usage_read_without_mapping_checks(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = json.loads(json.dumps(_RESPONSES[name]))
    expected = core_usage(ResponseUsage.model_validate(body))
    monkeypatch.setattr(usage_module, "Mapping", _NoMapping)
    got = core_usage(body)
    assert got == expected and got.model_fields_set == expected.model_fields_set


def test_item_3_core_openai_usage_of_other_mappings_still_read() -> None:
    from types import MappingProxyType

    counts = _CHAT["the API's"]
    proxied = MappingProxyType({**counts, "prompt_tokens_details": MappingProxyType(counts["prompt_tokens_details"])})
    assert core_usage(proxied) == core_usage(counts)
    assert not core_usage(["not", "a", "usage"]).reported
