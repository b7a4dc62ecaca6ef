"""Issue 12 item 4: reading structured output is linear in the answer's size, deadline-aware, and typed.

300 KB of ``{`` used to take 14.7 s (every ``{`` tried as a JSON start, each failure counting lines up to it)
past any deadline; JSON nested thousands of levels deep raised a bare ``RecursionError``, from the answer text,
from an output tool's arguments, and from a handled tool's arguments. Now a hostile answer is an
``LLMOutputParseError`` within the call's deadline (or ``LLMDeadlineExceededError`` at it), and a handled
tool's too-deep arguments go back to the model as a tool error.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from pydantic import BaseModel

import llmplex
from llmplex import Clock, Deadline, LLMDeadlineExceededError, LLMOutputParseError, hookimpl

OVERRUN = 0.05
BRACES = "{" * 300_000
DEEP = "[" * 5000 + "]" * 5000


class City(BaseModel):
    name: str


def _client(*plugins: object) -> tuple[llmplex.Client, Any]:
    client = llmplex.Client(plugins=list(plugins))
    return client, client.provider_client("mock")


def test_item_04_300_kb_of_braces_is_a_parse_error_within_the_deadline() -> None:
    client, backend = _client()
    backend.push(BRACES)
    deadline = Deadline.after(10)  # the scan takes well under a second; the quadratic one took 14.7 s on a fast host
    with pytest.raises(LLMOutputParseError, match="no JSON value"):
        client.complete("mock:m", "capital of France?", output=City, deadline=deadline)
    assert time.monotonic() < deadline.at + OVERRUN


class _JumpPastDeadline:
    """An observer that moves the call's clock two minutes on once the answer has arrived."""

    def __init__(self) -> None:
        self.now = 1000.0

    def clock(self) -> Clock:
        return Clock(monotonic=lambda: self.now)

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.PromptExecuted):
            self.now += 120


def test_item_04_looking_for_json_in_a_long_answer_stops_at_the_deadline() -> None:
    jump = _JumpPastDeadline()
    client, backend = _client(jump)
    backend.push("Here it is: " + BRACES)
    deadline = Deadline.after(60, jump.clock())
    with pytest.raises(LLMDeadlineExceededError, match="JSON value"):
        client.complete("mock:m", "capital of France?", output=City, deadline=deadline)


@pytest.mark.parametrize(
    "answer",
    [DEEP, f'{{"name": {DEEP}}}', f"```json\n{DEEP}\n```", f"Sure: {DEEP} there"],
    ids=["bare", "in-object", "fenced", "in-prose"],
)
def test_item_04_deeply_nested_json_in_the_answer_is_a_parse_error(answer: str) -> None:
    client, backend = _client()
    backend.push(answer)
    with pytest.raises(LLMOutputParseError, match="nested too deeply") as info:
        client.complete("mock:m", "capital of France?", output=City)
    assert info.value.validation_errors


def test_item_04_deeply_nested_output_tool_arguments_are_a_parse_error() -> None:
    client, backend = _client()
    backend.push(tool_calls=[{"name": "City", "arguments": f'{{"name": {DEEP}}}'}])
    with pytest.raises(LLMOutputParseError, match="nested too deeply"):
        client.complete("mock:m", "capital of France?", output=City, output_strategy="tool")


def test_item_04_deep_data_against_a_recursive_schema_is_a_parse_error() -> None:
    tree = {
        "type": "object",
        "properties": {"children": {"$ref": "#/$defs/list"}},
        "$defs": {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}},
    }
    client, backend = _client()
    backend.push(json.dumps({"children": json.loads("[" * 900 + "]" * 900)}))
    with pytest.raises(LLMOutputParseError, match="nested too deeply"):
        client.complete("mock:m", "a tree", output=tree)


def test_item_04_a_handled_tool_with_deeply_nested_arguments_gets_an_error_message() -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: found"

    client, backend = _client()
    backend.push(tool_calls=[{"name": "lookup", "arguments": f'{{"city": {DEEP}}}'}])
    backend.push("I could not look it up.")
    answer = client.complete("mock:m", "find Paris", tools=[lookup])
    assert answer.text == "I could not look it up."
    sent_back = backend.calls[-1]["messages"][-1]["content"]
    assert "nested too deeply" in sent_back
