"""Issue 12 item 10: a tool whose JSON Schema has a $ref to nothing is refused when the tool is built."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import llmplex
from llmplex import LLMConfigurationError, Tool
from llmplex.providers.mock import MockBackend

DANGLING = {
    "type": "object",
    "properties": {"item": {"$ref": "#/$defs/Item"}},
    "$defs": {"Other": {"type": "string"}},
}


class Item(BaseModel):
    sku: str


class BrokenItem(BaseModel):
    """Its schema points at a definition pydantic does not know."""

    model_config = ConfigDict(json_schema_extra={"properties": {"next": {"$ref": "#/$defs/Gone"}}})
    sku: str


class StrayItem(BaseModel):
    """Its schema points outside pydantic's $defs, to nothing."""

    model_config = ConfigDict(json_schema_extra={"properties": {"next": {"$ref": "#/definitions/Stray"}}})
    sku: str


def _handler(**kwargs: Any) -> str:
    return "ok"


@pytest.mark.parametrize(
    "parameters",
    [
        DANGLING,
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"$ref": "#/definitions/Nope"}}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "null"}, {"$ref": "#missing-anchor"}]}}},
        {"type": "object", "properties": {"a": {"$ref": "https://schemas.example.com/remote.json"}}},
    ],
    ids=["defs", "nested-definitions", "anchor", "remote"],
)
def test_item_10_tool_constructor_rejects_dangling_ref(parameters: dict[str, Any]) -> None:
    ref = json.dumps(parameters).split('"$ref": "')[1].split('"')[0]
    with pytest.raises(LLMConfigurationError) as caught:
        Tool(name="lookup", parameters=parameters, handler=_handler)
    message = str(caught.value)
    assert "'lookup'" in message
    assert ref in message


def test_item_10_only_refs_to_nothing_are_refused() -> None:
    resolvable = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}, "again": {"$ref": "#/properties/item"}, "me": {"$ref": "#"}},
        "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    }
    assert Tool(name="lookup", parameters=resolvable).parameters == resolvable
    with pytest.raises(LLMConfigurationError, match=r"#/\$defs/Item"):
        Tool(name="lookup", parameters={**resolvable, "$defs": {}})


def test_item_10_dict_tool_refused_before_sending(client: llmplex.Client, mock_backend: MockBackend) -> None:
    tool = {"name": "lookup", "description": "Find an item.", "parameters": DANGLING, "handler": _handler}
    with pytest.raises(LLMConfigurationError, match=r"'lookup'.*#/\$defs/Item"):
        client.complete("mock:m", "find it", tools=[tool])
    assert mock_backend.calls == []


def test_item_10_from_function_rejects_dangling_ref() -> None:
    def order_good(item: Item, count: int = 1) -> str:
        """Order an item."""
        return f"{count} x {item.sku}"

    assert "$defs" in Tool.from_function(order_good).parameters

    def order(item: BrokenItem) -> str:
        """Order an item."""
        return item.sku

    with pytest.raises(LLMConfigurationError, match=r"'order'.*#/\$defs/Gone"):
        Tool.from_function(order)

    def order_stray(item: StrayItem) -> str:
        """Order an item."""
        return item.sku

    with pytest.raises(LLMConfigurationError, match=r"'order_stray'.*#/definitions/Stray"):
        Tool.from_function(order_stray)
