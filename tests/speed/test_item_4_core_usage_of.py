"""Issue 34 item 4: ``Usage.of`` (every streamed answer's usage, Anthropic's at its stream's end) merges the counts
into a fresh usage's fields at once, then checks the values alone, instead of checking and storing them one name at a
time. What it builds is as before: equal to the validated usage (fields, their order, fields set, dump), and any
other name or value is validated as ``Usage(**counts)`` is."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from llmplex.errors import LLMUsageError
from llmplex.types import Usage
from llmplex.types import usage as usage_module


class _NoItems(dict[str, Any]):
    """Counts whose items are not to be walked one by one."""

    def items(self) -> Any:
        raise AssertionError("the counts walked name by name")


class _Counts(Mapping[str, Any]):
    """A mapping of counts that is not a ``dict``."""

    def __init__(self, counts: dict[str, Any]) -> None:
        self._counts = counts

    def __getitem__(self, name: str) -> Any:
        return self._counts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)


COUNTS = (
    {"input_tokens": 18, "output_tokens": 7, "cached_tokens": 4, "cache_write_tokens": 5, "cache_write_1h_tokens": 3},
    {"input_tokens": 9, "output_tokens": 7, "total_tokens": 16, "reasoning_tokens": 3},
    {"output_tokens": 0},
    {},
)


@pytest.mark.parametrize("counts", COUNTS)
def test_item_4_usage_of_does_not_walk_the_counts_by_name(counts: dict[str, Any]) -> None:
    usage = Usage.of(_NoItems(counts))
    validated = Usage(**counts)
    assert usage == validated
    assert list(usage.__dict__) == list(validated.__dict__)
    assert usage.model_fields_set == validated.model_fields_set
    assert usage.model_dump() == validated.model_dump()


@pytest.mark.parametrize(
    "counts",
    [{"input_tokens": 3, "reported": 1}, {"input_tokens": 3, "reported": False}, {"input_tokens": 3, "other": 2}],
)
def test_item_4_usage_of_validates_other_names(counts: dict[str, Any]) -> None:
    usage = Usage.of(counts)
    validated = Usage(**counts)
    assert usage == validated
    assert usage.reported is validated.reported
    assert usage.model_fields_set == validated.model_fields_set


@pytest.mark.parametrize("value", [True, -1, 10**12 + 1, 2.5, "3"])
def test_item_4_usage_of_validates_other_values(value: Any) -> None:
    with pytest.raises(LLMUsageError):
        Usage.of({"input_tokens": 3, "output_tokens": value})


@pytest.mark.parametrize("counts", COUNTS)
def test_item_4_usage_of_takes_any_mapping_of_counts(counts: dict[str, Any]) -> None:
    usage = Usage.of(_Counts(counts))  # type: ignore[arg-type]  # a plugin's own mapping of counts
    assert usage == Usage(**counts)
    assert usage.model_fields_set == Usage(**counts).model_fields_set


NOT_COUNTS = sorted(set(Usage.model_fields) - set(usage_module._COUNTS))


@pytest.mark.parametrize("name", NOT_COUNTS)
def test_item_4_usage_of_validates_every_field_that_is_not_a_count(name: str) -> None:
    """``Usage.of`` skips validation only for counts: a field added to ``Usage`` that is no count (today only
    ``reported``) must reach validation too, whatever ``Usage.of`` names as its non-counts."""
    counts = {"input_tokens": 3, name: 1}
    try:
        validated = Usage(**counts)
    except ValueError as refused:
        with pytest.raises(type(refused)):
            Usage.of(counts)
        return
    usage = Usage.of(counts)
    assert [(k, type(v), v) for k, v in usage.__dict__.items()] == [
        (k, type(v), v) for k, v in validated.__dict__.items()
    ]
