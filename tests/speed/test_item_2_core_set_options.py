"""Issue 34 item 2: ``LLMConfig.set_options`` (every provider's format reads it once a call) is read from the
fields themselves, not through pydantic's serializer: the same dict ``model_dump(exclude_none=True)`` gives, in
the same order; a subclass is still dumped by pydantic."""

from __future__ import annotations

from typing import Any

import pytest

from llmplex.types.request import LLMConfig

CONFIGS = [
    LLMConfig(),
    LLMConfig(temperature=0.0, seed=0),
    LLMConfig(max_tokens=5, stop=["a", "b"], reasoning_effort="low", temperature=None),
    LLMConfig(
        temperature=2,
        max_tokens=1,
        top_p=1,
        presence_penalty=-2,
        frequency_penalty=2,
        stop=[],
        seed=-1,
        reasoning_effort="max",
    ),
    LLMConfig.model_construct(top_p=0.5),
]


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_item_2_set_options_is_the_dump_without_the_serializer(
    config: LLMConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = config.model_dump(exclude_none=True)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("set_options went through pydantic's serializer")

    monkeypatch.setattr(LLMConfig, "model_dump", refused)
    options = config.set_options()
    assert options == expected and list(options) == list(expected)
    assert [type(value) for value in options.values()] == [type(value) for value in expected.values()]
    assert options is not config.set_options()  # a dict of its own each time: callers may change it


def test_item_2_a_subclass_is_dumped_by_pydantic() -> None:
    class Shouted(LLMConfig):
        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            return {key.upper(): value for key, value in super().model_dump(**kwargs).items()}

    assert Shouted(temperature=1).set_options() == {"TEMPERATURE": 1.0}
