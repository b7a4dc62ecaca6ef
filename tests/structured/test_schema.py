"""Output types as JSON Schemas, strategy choice, and finding JSON in text."""

from __future__ import annotations

import dataclasses
import sys
import typing

import pytest
import typing_extensions
from pydantic import BaseModel

from llmplex import Capabilities, LLMConfigurationError, OutputSchema
from llmplex.structured.extract import extract_json
from llmplex.structured.plan import choose_strategy
from llmplex.structured.schema import OutputInvalidError, is_strict, output_spec


class City(BaseModel):
    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Movie(typing_extensions.TypedDict):
    title: str
    year: int


def test_pydantic_model_gives_schema_and_validated_instance() -> None:
    spec = output_spec(City)
    assert spec.schema.name == "City"
    assert spec.schema.json_schema["required"] == ["name", "population"]
    assert "title" not in spec.schema.json_schema
    assert spec.validate({"name": "Paris", "population": "2100000"}) == City(name="Paris", population=2100000)


def test_dataclass_and_typeddict() -> None:
    assert output_spec(Point).validate({"x": 1, "y": 2.5}) == Point(1.0, 2.5)
    movie = output_spec(Movie)
    assert movie.schema.name == "Movie"
    assert movie.validate({"title": "Heat", "year": 1995}) == {"title": "Heat", "year": 1995}


def test_typing_typeddict_works_or_says_what_to_use() -> None:
    class Plain(typing.TypedDict):
        a: int

    if sys.version_info >= (3, 12):
        assert output_spec(Plain).validate({"a": "1"}) == {"a": 1}
    else:
        with pytest.raises(LLMConfigurationError, match=r"typing_extensions\.TypedDict"):
            output_spec(Plain)


def test_validation_errors_carry_paths() -> None:
    with pytest.raises(OutputInvalidError) as caught:
        output_spec(City).validate({"name": "Paris", "population": "many"})
    assert caught.value.errors == [
        {"path": "population", "message": "Input should be a valid integer, unable to parse string as an integer"}
    ]


def test_raw_json_schema_validates_with_jsonschema() -> None:
    schema = {
        "title": "weather report",
        "type": "object",
        "properties": {"temp": {"type": "number"}, "sky": {"enum": ["clear", "cloudy"]}},
        "required": ["temp", "sky"],
        "additionalProperties": False,
    }
    spec = output_spec(schema)
    assert spec.schema.name == "weather_report"
    assert spec.schema.strict is True
    assert spec.validate({"temp": 3, "sky": "clear"}) == {"temp": 3, "sky": "clear"}
    with pytest.raises(OutputInvalidError) as caught:
        spec.validate({"temp": "cold", "sky": "rain"})
    assert {e["path"] for e in caught.value.errors} == {"temp", "sky"}


def test_output_schema_passes_through() -> None:
    schema = OutputSchema(name="n", json_schema={"type": "integer"}, strict=False)
    spec = output_spec(schema)
    assert spec.schema is schema
    assert spec.validate(3) == 3


def test_invalid_output_arguments_are_configuration_errors() -> None:
    with pytest.raises(LLMConfigurationError, match="output is not a valid JSON Schema at type"):
        output_spec({"type": "no-such-type"})
    with pytest.raises(LLMConfigurationError, match="pydantic model, a dataclass, a TypedDict"):
        output_spec(int)


def test_strictness_follows_openai_rules() -> None:
    assert not is_strict(output_spec(City).schema.json_schema)  # pydantic allows extra keys
    nested = {
        "type": "object",
        "properties": {"inner": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}},
        "required": ["inner"],
        "additionalProperties": False,
    }
    assert not is_strict(nested)
    nested["properties"]["inner"]["additionalProperties"] = False
    assert is_strict(nested)


@pytest.mark.parametrize(
    ("capabilities", "expected"),
    [
        (Capabilities(native_structured_output=True, tools=True), "native"),
        (Capabilities(tools=True), "tool"),
        (Capabilities(), "prompt"),
    ],
)
def test_strategy_prefers_native_then_tool_then_prompt(capabilities: Capabilities, expected: str) -> None:
    assert choose_strategy(capabilities) == expected


def test_requested_strategy_wins_and_is_checked() -> None:
    assert choose_strategy(Capabilities(), "native") == "native"
    with pytest.raises(LLMConfigurationError, match="output_strategy must be one of native, tool, prompt"):
        choose_strategy(Capabilities(), "magic")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ("Sure! Here it is:\n```\n[1, 2]\n```\nAnything else?", [1, 2]),
        ('The answer is {"a": {"b": [1]}} and also {"c": 2}.', {"a": {"b": [1]}}),
        ('Use {curly} words, then {"a": 2}', {"a": 2}),
        ("  42  ", 42),
    ],
)
def test_extract_json_takes_the_first_json_value(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_extract_json_without_json_raises() -> None:
    with pytest.raises(ValueError, match="no JSON value"):
        extract_json("I do not know.")
