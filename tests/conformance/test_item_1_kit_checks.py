"""Issue 14 item 1: the kit's checks are standard tests (run, or visibly xfailed); arguments are read as data."""

from __future__ import annotations

import pytest

from llmplex.testing.enforcement import ConformanceError, standard_tests
from llmplex.testing.kit import ProviderConformanceTests
from llmplex.testing.sent import json_arguments

NEW_CHECKS = {
    "test_multi_turn",
    "test_tool_choice",
    "test_tool_results",
    "test_parallel_tool_results",
    "test_only_given_options_reach_the_wire",
    "test_several_tool_calls",
    "test_usage_details",
    "test_length_finish",
    "test_refusal",
    "test_streamed_refusal",
    "test_stream_assembles_to_the_complete_answer",
    "test_errors_are_classified",
    "test_retry_after_is_read",
    "test_timeout_is_honoured",
    "test_async_path_does_not_block_the_event_loop",
}


def test_item_1_every_check_is_a_standard_test() -> None:
    assert set(standard_tests(ProviderConformanceTests)) >= NEW_CHECKS


@pytest.mark.parametrize("name", ["test_timeout_is_honoured", "test_async_path_does_not_block_the_event_loop"])
def test_item_1_a_check_cannot_be_weakened_quietly(name: str) -> None:
    with pytest.raises(ConformanceError, match=f"overrides {name} without"):
        type("TestWeakened", (ProviderConformanceTests,), {name: lambda self: None})


def test_item_1_tool_arguments_sent_as_text_are_read_as_data_once() -> None:
    assert json_arguments('{"city": "Paris"}') == {"city": "Paris"}
    assert json_arguments('"{\\"city\\": \\"Paris\\"}"') == '{"city": "Paris"}'  # sent twice encoded: a string
    assert json_arguments({"city": "Paris"}) == {"city": "Paris"}
