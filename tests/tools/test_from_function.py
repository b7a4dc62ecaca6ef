"""``Tool.from_function``: JSON Schema from signatures, descriptions from docstrings."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from llmplex import LLMConfigurationError, Tool, ToolContext
from llmplex.types.function_tool import FunctionHandler


class Address(BaseModel):
    street: str
    zip_code: str


def get_weather(city: str, unit: Literal["C", "F"] = "C", days: int = 1) -> str:
    """Current weather for a city.

    Looks it up in the forecast service.

    Args:
        city: the city name, e.g. "Paris".
        unit: temperature unit;
            C or F.
        days (int): how many days ahead.

    Returns:
        A short description.
    """
    return f"{city}: sunny"


def test_google_docstring_and_signature() -> None:
    tool = Tool.from_function(get_weather)
    assert tool.name == "get_weather"
    assert tool.description == "Current weather for a city.\n\nLooks it up in the forecast service."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": 'the city name, e.g. "Paris".'},
            "unit": {"enum": ["C", "F"], "type": "string", "default": "C", "description": "temperature unit; C or F."},
            "days": {"type": "integer", "default": 1, "description": "how many days ahead."},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert isinstance(tool.handler, FunctionHandler)
    assert tool.handler(city="Oslo") == "Oslo: sunny"


def test_sphinx_docstring_nested_models_and_context() -> None:
    async def ship(address: Address, ctx: ToolContext, express: bool = False) -> str:
        """Ship the order.

        :param address: where to send it
        :param express: next-day delivery
        :returns: tracking number
        """
        return "T1"

    tool = Tool.from_function(ship, name="ship_order", description="Ship it.")
    assert (tool.name, tool.description) == ("ship_order", "Ship it.")
    assert set(tool.parameters["properties"]) == {"address", "express"}
    assert tool.parameters["properties"]["address"] == {"$ref": "#/$defs/Address", "description": "where to send it"}
    assert tool.parameters["properties"]["express"]["description"] == "next-day delivery"
    assert "Address" in tool.parameters["$defs"]
    assert isinstance(tool.handler, FunctionHandler)
    assert tool.handler.context_param == "ctx" and tool.handler.is_async


def test_validated_arguments_are_typed() -> None:
    def register(address: Address, count: int) -> None:
        """Register."""

    handler = Tool.from_function(register).handler
    assert isinstance(handler, FunctionHandler)
    assert handler.keyword_arguments({"address": {"street": "Main", "zip_code": "1"}, "count": "3"}) == {
        "address": Address(street="Main", zip_code="1"),
        "count": 3,
    }


def test_undeclarable_functions_are_configuration_errors() -> None:
    def star(*names: str) -> None: ...

    def positional(a: int, /) -> None: ...

    with pytest.raises(LLMConfigurationError, match=r"takes \*names"):
        Tool.from_function(star)
    with pytest.raises(LLMConfigurationError, match="positional-only"):
        Tool.from_function(positional)
    with pytest.raises(LLMConfigurationError, match="tool name '<lambda>' is invalid"):
        Tool.from_function(lambda x: x)
    with pytest.raises(LLMConfigurationError, match="needs a function"):
        Tool.from_function("not callable")  # type: ignore[arg-type]


def test_unannotated_parameters_accept_anything() -> None:
    def echo(value, note: str = "") -> str:  # type: ignore[no-untyped-def]
        """Echo."""
        return str(value)

    tool = Tool.from_function(echo)
    assert tool.parameters["properties"]["value"] == {}
    assert tool.parameters["required"] == ["value"]
