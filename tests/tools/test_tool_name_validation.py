"""Issue 14 item 6: a tool name providers would reject is a typed LLMConfigurationError saying what a valid name is."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import llmplex
from llmplex import LLMConfigurationError, Tool

RULE = "1 to 64 characters, each a letter, a digit, '_' or '-'"


@pytest.mark.parametrize("name", ["bad name", "", "a" * 65, "dotted.name", "émoji", "semi;colon", 7, None])
def test_item_6_an_invalid_tool_name_is_a_configuration_error_saying_what_is_valid(name: Any) -> None:
    with pytest.raises(LLMConfigurationError) as caught:
        Tool(name=name)
    assert not isinstance(caught.value, ValidationError)
    message = str(caught.value)
    assert repr(name) in message and RULE in message


@pytest.mark.parametrize("name", ["get_weather", "a", "A-1_b", "x" * 64])
def test_item_6_valid_tool_names_are_kept(name: str) -> None:
    assert Tool(name=name).name == name


def test_item_6_a_tool_dict_with_a_bad_name_fails_the_call_the_same_way() -> None:
    with pytest.raises(
        LLMConfigurationError,
        match=r"tools\[0\] is not a valid tool: tool name 'two words' is invalid: a tool name is 1 to 64",
    ):
        llmplex.Client().complete("mock:echo", "hi", tools=[{"name": "two words", "parameters": {"type": "object"}}])


def test_item_6_from_function_on_a_lambda_says_to_pass_a_name() -> None:
    with pytest.raises(LLMConfigurationError, match=r"tool name '<lambda>' is invalid: .*pass name=\.\.\."):
        Tool.from_function(lambda x: x)
    assert Tool.from_function(lambda x: x, name="identity").name == "identity"


def test_item_6_from_function_with_a_bad_explicit_name_names_it() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(LLMConfigurationError, match=r"tool name 'add numbers' is invalid"):
        Tool.from_function(add, name="add numbers")
