"""Issue 34 item 4: llmplex-anthropic's and llmplex-gemini's answers build their ``Usage`` with ``Usage.of`` (once,
unvalidated when the counts fit): the same usage as ``Usage(**counts)`` for documented counts, and the same error
for hostile ones (negative, impossible, not integers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types
from llmplex_anthropic.response import usage_counts
from llmplex_gemini.response import usage_from

from llmplex.types import Usage
from tests.speed.test_item_4_gemini_usage import _same_usage

ANTHROPIC = [
    {"input_tokens": 25, "output_tokens": 310},
    {"input_tokens": 3, "output_tokens": 12, "cache_read_input_tokens": 2048, "cache_creation_input_tokens": 512},
    {"input_tokens": 7, "output_tokens": 1, "ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 900},
    {"input_tokens": 0, "output_tokens": 0},
]
GEMINI = [
    {"prompt_token_count": 12, "candidates_token_count": 40, "total_token_count": 52},
    {"prompt_token_count": 9, "candidates_token_count": 5, "thoughts_token_count": 30, "total_token_count": 44},
    {
        "prompt_token_count": 300,
        "candidates_token_count": 20,
        "cached_content_token_count": 256,
        "tool_use_prompt_token_count": 15,
        "total_token_count": 335,
        "prompt_tokens_details": [{"modality": "AUDIO", "token_count": 120}, {"modality": "TEXT", "token_count": 180}],
        "cache_tokens_details": [{"modality": "AUDIO", "token_count": 100}],
        "candidates_tokens_details": [{"modality": "AUDIO", "token_count": 8}],
    },
]
HOSTILE_ANTHROPIC = [
    {"input_tokens": -5, "output_tokens": 10},
    {"input_tokens": 10, "output_tokens": 10**15},
    {"input_tokens": 1.5, "output_tokens": 2},
    {"input_tokens": "12", "output_tokens": 2},
]
HOSTILE_GEMINI = [
    {"prompt_token_count": -1, "candidates_token_count": 4},
    {"prompt_token_count": 10, "candidates_token_count": 4, "total_token_count": 3},
    {"prompt_token_count": 10**15, "candidates_token_count": 4},
]


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], Usage]], Usage | BaseException]:
    """Run a builder with ``Usage.of`` as ``Usage(**counts)`` (every count validated): the usage or the error."""

    def run(build: Callable[[], Usage]) -> Usage | BaseException:
        with monkeypatch.context() as patched:
            patched.setattr(Usage, "of", classmethod(lambda cls, counts: cls(**counts)))
            try:
                return build()
            except Exception as error:  # the error itself is compared
                return error

    return run


def _builders() -> list[tuple[str, Callable[[], Usage]]]:
    built: list[tuple[str, Callable[[], Usage]]] = []
    for counts in ANTHROPIC + HOSTILE_ANTHROPIC:
        built.append((f"anthropic {counts}", lambda counts=counts: usage_counts(counts)))  # type: ignore[misc]
    for metadata in GEMINI + HOSTILE_GEMINI:
        model = types.GenerateContentResponseUsageMetadata.model_construct(**metadata)
        if "prompt_tokens_details" in metadata:
            model = types.GenerateContentResponseUsageMetadata.model_validate(metadata)
        built.append((f"gemini {metadata}", lambda model=model: usage_from(model)))  # type: ignore[misc]
    return built


@pytest.mark.parametrize(("name", "build"), _builders(), ids=[name for name, _ in _builders()])
def test_item_4_plugin_usage_is_the_validated_usage_or_its_error(
    name: str,
    build: Callable[[], Usage],
    validated: Callable[[Callable[[], Usage]], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Documented counts: equal in every way, and built without validating a ``Usage``; hostile ones: the error."""
    expected = validated(build)
    if isinstance(expected, BaseException):
        with pytest.raises(type(expected)) as caught:
            build()
        assert str(caught.value) == str(expected)
        return
    checks: list[object] = []
    init = Usage.__init__

    def counted(self: Usage, **data: Any) -> None:
        checks.append(data)
        init(self, **data)

    monkeypatch.setattr(Usage, "__init__", counted)
    fast = build()
    monkeypatch.undo()
    assert checks == []
    _same_usage(fast, expected)
