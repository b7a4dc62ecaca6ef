"""Issue 34 item 2: pricing a usage (``Usage.priced``, once per call) copies it without pydantic's general
``model_copy``: the copy is the one ``model_copy`` made, in every way, and the original is left as it was."""

from __future__ import annotations

from typing import Any

import pytest

from llmplex.types import Usage

USAGES = [
    Usage(input_tokens=10, output_tokens=20),
    Usage(input_tokens=1000, output_tokens=5, cached_tokens=800, cache_write_tokens=100),
    Usage(input_tokens=3, output_tokens=40, reasoning_tokens=30, total_tokens=43),
    Usage.unreported(),
    Usage(input_tokens=10, output_tokens=2).priced("openai", "gpt-4o-mini", batch=True),
    Usage(input_tokens=10, output_tokens=2) + Usage(input_tokens=5, output_tokens=1),
]


def _state(usage: Usage) -> tuple[Any, ...]:
    return (
        type(usage),
        list(usage.__dict__.items()),
        usage.model_fields_set,
        usage.__pydantic_private__,
        usage.__pydantic_extra__,
        usage.model_dump(),
        usage.cost_usd,
        usage.cost_note,
    )


@pytest.mark.parametrize("usage", USAGES, ids=range(len(USAGES)))
@pytest.mark.parametrize(
    ("plugin", "model", "batch"), [("openai", "gpt-4o-mini", False), ("anthropic", "claude-sonnet-4-5", True)]
)
def test_item_2_priced_copy_is_model_copys(
    usage: Usage, plugin: str, model: str, batch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _state(usage)
    fast = usage.priced(plugin, model, batch=batch)
    copies: list[Usage] = []
    model_copy = Usage.model_copy

    def counted(self: Usage, *args: Any, **kwargs: Any) -> Usage:
        copies.append(self)
        return model_copy(self, *args, **kwargs)

    with monkeypatch.context() as patched:  # the old way: model_copy, then the private attributes set
        patched.setattr(Usage, "model_copy", counted)
        expected = usage.model_copy()
        expected.__pydantic_private__.update(  # type: ignore[union-attr]
            _priced_as=fast.__pydantic_private__["_priced_as"],
            _batch=batch,
            _parts=(),  # type: ignore[index]
        )
        fast_again = usage.priced(plugin, model, batch=batch)
    assert copies == [usage]  # only the expected copy above: pricing made none
    assert _state(fast) == _state(expected) == _state(fast_again)
    assert fast.__pydantic_private__ is not usage.__pydantic_private__
    assert _state(usage) == before


def test_item_2_priced_again_as_the_same_is_the_same_object() -> None:
    usage = Usage(input_tokens=10, output_tokens=20).priced("openai", "gpt-4o-mini")
    assert usage.priced("openai", "gpt-4o-mini") is usage
