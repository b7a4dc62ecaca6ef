"""``complete(..., output=...)`` on the mock provider: the three strategies, retries, refusals, truncation."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pydantic import BaseModel

import llmplex
from llmplex import (
    Clock,
    LLMIncompleteError,
    LLMOutputParseError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
)
from llmplex.providers.mock import MockBackend


class City(BaseModel):
    name: str
    country: str


@dataclasses.dataclass
class Score:
    value: int


PARIS = '{"name": "Paris", "country": "France"}'


async def _no_wait(seconds: float) -> None:
    return None


@pytest.fixture
def client() -> llmplex.Client:
    """A client whose retry waits take no time."""
    return llmplex.Client(clock=Clock(sleep=lambda s: None, asleep=_no_wait))


def test_mock_uses_a_forced_tool_call_by_default(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[{"name": "City", "arguments": PARIS}])
    response = client.complete("mock:m", "Capital of France?", output=City)
    assert response.output == City(name="Paris", country="France")
    payload = mock_backend.calls[-1]
    assert payload["tool_choice"] == "City"
    assert [t["name"] for t in payload["tools"]] == ["City"]
    assert payload["tools"][0]["parameters"]["required"] == ["name", "country"]
    assert payload["output"] is None


def test_tool_strategy_reads_a_text_answer_when_the_tool_is_not_called(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    mock_backend.push('The answer: {"name": "Paris"}')
    mock_backend.push(f"```json\n{PARIS}\n```")
    response = client.complete("mock:m", "Capital of France?", output=City, output_strategy="tool", output_retries=1)
    assert response.output == City(name="Paris", country="France")
    retry = mock_backend.calls[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert "country: Field required" in retry[-1]["content"]


def test_native_strategy_sends_the_schema(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(PARIS)
    response = client.complete("mock:m", "Capital of France?", output=City, output_strategy="native")
    assert response.output == City(name="Paris", country="France")
    payload = mock_backend.calls[-1]
    assert payload["output"]["name"] == "City"
    assert payload["output"]["json_schema"]["properties"].keys() == {"name", "country"}
    assert payload["tools"] == [] and payload["tool_choice"] is None


def test_prompt_strategy_puts_the_schema_in_the_system_prompt(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    mock_backend.push(f"Here you go:\n```json\n{PARIS}\n```\nHope that helps!")
    response = client.complete("mock:m", "Capital?", system="Be brief.", output=City, output_strategy="prompt")
    assert response.output == City(name="Paris", country="France")
    messages = mock_backend.calls[-1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith("Be brief.\n\nAnswer with one JSON value")
    assert '"country"' in messages[0]["content"]


def test_dataclass_and_raw_schema_outputs(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[{"name": "Score", "arguments": '{"value": "7"}'}])
    assert client.complete("mock:m", "score?", output=Score).output == Score(7)
    schema = {"title": "tags", "type": "array", "items": {"type": "string"}}
    mock_backend.push('["a", "b"]')
    assert client.complete("mock:m", "tags?", output=schema, output_strategy="prompt").output == ["a", "b"]


def test_invalid_answer_raises_with_raw_text_and_errors(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[{"name": "City", "arguments": '{"name": "Paris"}'}])
    with pytest.raises(LLMOutputParseError) as caught:
        client.complete("mock:m", "Capital?", output=City)
    error = caught.value
    assert error.raw_text == '{"name": "Paris"}'
    assert error.validation_errors == [{"path": "country", "message": "Field required"}]
    assert (error.provider, error.model) == ("mock", "m")
    assert len(mock_backend.calls) == 1


def test_text_without_json_is_a_parse_error(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push("Paris, France.")
    with pytest.raises(LLMOutputParseError, match="not JSON") as caught:
        client.complete("mock:m", "Capital?", output=City, output_strategy="native")
    assert caught.value.raw_text == "Paris, France."


def test_output_retries_reask_with_the_validation_error(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[{"name": "City", "arguments": '{"name": "Paris"}', "id": "c1"}])
    mock_backend.push(tool_calls=[{"name": "City", "arguments": PARIS}])
    response = client.complete("mock:m", "Capital?", output=City, output_retries=1)
    assert response.output.country == "France"
    retry = mock_backend.calls[1]["messages"]
    assert retry[-2]["role"] == "assistant" and retry[-2]["tool_calls"][0]["id"] == "c1"
    assert retry[-1]["role"] == "tool" and retry[-1]["tool_call_id"] == "c1"
    assert "country: Field required" in retry[-1]["content"]


def test_text_retries_use_a_user_message(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push('{"name": 1}')
    mock_backend.push(PARIS)
    response = client.complete("mock:m", "Capital?", output=City, output_strategy="native", output_retries=2)
    assert response.output.name == "Paris"
    retry = mock_backend.calls[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert retry[1]["content"] == '{"name": 1}'
    assert "name: Input should be a valid string" in retry[2]["content"]


def test_retries_run_out(client: llmplex.Client, mock_backend: MockBackend) -> None:
    for _ in range(3):
        mock_backend.push("{}")
    with pytest.raises(LLMOutputParseError) as caught:
        client.complete("mock:m", "Capital?", output=City, output_strategy="native", output_retries=2)
    assert len(mock_backend.calls) == 3
    assert caught.value.context["output_retries"] == 2


def test_rate_limits_are_transport_retries_not_parse_failures(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    mock_backend.push("{}")
    mock_backend.push_error(LLMRateLimitError("slow down", retry_after=0))
    mock_backend.push_error(LLMServerError("overloaded"))
    mock_backend.push(PARIS)
    response = client.complete("mock:m", "Capital?", output=City, output_strategy="native", output_retries=1)
    assert response.output.name == "Paris"
    assert len(mock_backend.calls) == 4
    assert response.attempts == 3


def test_usage_adds_up_over_retries(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push("{}", usage={"input_tokens": 10, "output_tokens": 1})
    mock_backend.push(PARIS, usage={"input_tokens": 20, "output_tokens": 5})
    response = client.complete("mock:m", "Capital?", output=City, output_strategy="native", output_retries=1)
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (30, 6, 36)


def test_refusal_raises(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push("I can't help with that.", finish_reason="refusal")
    with pytest.raises(LLMRefusalError) as caught:
        client.complete("mock:m", "Capital?", output=City, output_retries=3)
    assert caught.value.refusal == "I can't help with that."
    assert len(mock_backend.calls) == 1


def test_truncation_raises_incomplete(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[{"name": "City", "arguments": '{"name": "Par'}], finish_reason="length")
    with pytest.raises(LLMIncompleteError) as caught:
        client.complete("mock:m", "Capital?", output=City, output_retries=3, max_tokens=5)
    assert caught.value.partial_text == '{"name": "Par'
    assert caught.value.reason == "length"


def test_cut_off_answer_with_a_whole_valid_value_is_accepted(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(
        tool_calls=[{"name": "City", "arguments": PARIS}, {"name": "City", "arguments": '{"na'}],
        finish_reason="length",
    )
    assert client.complete("mock:m", "Capital?", output=City).output.name == "Paris"
    mock_backend.push(f"{PARIS} and then the model rambled on and on", finish_reason="length")
    assert client.complete("mock:m", "Capital?", output=City, output_strategy="prompt").output.name == "Paris"


async def test_async_structured_output(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[{"name": "City", "arguments": '{"name": "Rome"}'}])
    mock_backend.push(tool_calls=[{"name": "City", "arguments": json.dumps({"name": "Rome", "country": "Italy"})}])
    response = await client.acomplete("mock:m", "Capital of Italy?", output=City, output_retries=1)
    assert response.output == City(name="Rome", country="Italy")


def test_output_type_named_like_a_tool_is_rejected(client: llmplex.Client) -> None:
    def City(name: str) -> str:
        return name

    with pytest.raises(llmplex.LLMConfigurationError, match="named 'City' like the output type"):
        client.complete("mock:m", "x", output=globals()["City"], tools=[City])


def test_bad_loop_arguments_are_configuration_errors(client: llmplex.Client) -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match="output_retries must be a whole number >= 0"):
        client.complete("mock:m", "x", output=City, output_retries=-1)
