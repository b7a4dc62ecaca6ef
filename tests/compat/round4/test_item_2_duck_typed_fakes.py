"""Issue 35 item 2: duck-typed fakes work where weakincentives accepted them (litellm-shaped completions as
``SimpleNamespace`` objects or plain dicts, OpenAI-shaped responses), and error phases match the originals'."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from llmplex.compat.weakincentives import (
    PROMPT_EVALUATION_PHASE_TOOL,
    LiteLLMAdapter,
    MarkdownSection,
    OpenAIAdapter,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    Session,
    Tool,
    ToolResult,
)
from tests.compat.wi_helpers import FAST, greeting


@dataclass
class Query:
    query: str


@dataclass
class Found:
    answer: str


class Recording:
    """A ``completion(**request)`` answering from a list, keeping each request."""

    def __init__(self, *answers: object) -> None:
        self.answers, self.requests = list(answers), []  # type: list[object], list[dict[str, Any]]

    def __call__(self, **request: Any) -> object:
        self.requests.append(request)
        return self.answers.pop(0)


class PartialDump:
    """Like weakincentives' own test stubs: attributes carry ``choices``, ``model_dump()`` leaves them out."""

    def __init__(self, text: str) -> None:
        self.choices = [SimpleNamespace(message=SimpleNamespace(content=text, tool_calls=None))]
        self.usage = None

    def model_dump(self) -> dict[str, Any]:
        return {"output": []}


class MappingWithChoices(dict[str, object]):
    """A dict subclass whose ``choices`` is an attribute, not a key."""

    def __init__(self, text: str) -> None:
        super().__init__({"meta": "value"})
        self.choices = [SimpleNamespace(message=SimpleNamespace(content=text, tool_calls=None))]


def namespace_completion(text: str) -> SimpleNamespace:
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=text, tool_calls=None))])


def tool_call_completion(name: str, arguments: dict[str, Any]) -> SimpleNamespace:
    call = SimpleNamespace(id="call_1", function=SimpleNamespace(name=name, arguments=json.dumps(arguments)))
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="thinking", tool_calls=[call]))])


def search_prompt(handler: Any) -> Prompt[Any]:
    tool = Tool[Query, Found](name="search_notes", description="Search stored notes.", handler=handler)
    section = MarkdownSection[Query](title="Task", key="task", template="Look up ${query}", tools=[tool])
    return Prompt(PromptTemplate(ns="tests/round4", key="search", name="search", sections=[section])).bind(
        Query(query="policies")
    )


@pytest.mark.parametrize(
    "answer",
    [
        namespace_completion("Hello, Sam!"),
        {"choices": [{"message": {"content": "Hello, Sam!"}}]},
        PartialDump("Hello, Sam!"),
        MappingWithChoices("Hello, Sam!"),
    ],
    ids=["SimpleNamespace", "dict", "partial-model_dump", "dict-subclass"],
)
def test_item_2_litellm_shaped_fakes_are_read_as_weakincentives_read_them(answer: object) -> None:
    completion = Recording(answer)
    adapter = LiteLLMAdapter(model="gpt-test", completion=completion, throttle_policy=FAST)
    assert adapter.evaluate(greeting(), session=Session()).text == "Hello, Sam!"
    assert completion.requests[0]["model"] == "gpt-test"


def test_item_2_an_openai_shaped_namespace_response_with_a_tool_call_runs_the_tool() -> None:
    calls: list[Query] = []

    def handler(params: Query, *, context: Any) -> ToolResult[Found]:
        calls.append(params)
        return ToolResult.ok(Found(answer="done"), message="found it")

    call = SimpleNamespace(type="function_call", name="search_notes", arguments='{"query": "policies"}', call_id="c1")
    text = SimpleNamespace(type="message", content=[SimpleNamespace(type="output_text", text="All done.")])
    answers = [SimpleNamespace(output=[call]), SimpleNamespace(output=[text])]
    client = SimpleNamespace(responses=SimpleNamespace(create=lambda **_: answers.pop(0)))
    adapter = OpenAIAdapter(model="gpt-test", client=client, throttle_policy=FAST)
    assert adapter.evaluate(search_prompt(handler), session=Session()).text == "All done."
    assert calls == [Query(query="policies")]


def test_item_2_a_tool_without_a_handler_fails_in_phase_tool_on_both_adapters() -> None:
    completion = Recording(tool_call_completion("search_notes", {"query": "policies"}))
    litellm = LiteLLMAdapter(model="gpt-test", completion=completion, throttle_policy=FAST)
    with pytest.raises(PromptEvaluationError) as caught:
        litellm.evaluate(search_prompt(None), session=Session())
    assert caught.value.phase == PROMPT_EVALUATION_PHASE_TOOL and "does not have a registered handler" in str(
        caught.value
    )
    call = SimpleNamespace(type="function_call", name="search_notes", arguments='{"query": "x"}', call_id="c1")
    client = SimpleNamespace(responses=SimpleNamespace(create=lambda **_: SimpleNamespace(output=[call])))
    openai = OpenAIAdapter(model="gpt-test", client=client, throttle_policy=FAST)
    with pytest.raises(PromptEvaluationError) as again:
        openai.evaluate(search_prompt(None), session=Session())
    assert again.value.phase == PROMPT_EVALUATION_PHASE_TOOL


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (RuntimeError("boom"), "Tool 'search_notes' execution failed: boom"),
        (TypeError("bad"), "Tool 'search_notes' raised TypeError: bad"),
    ],
)
def test_item_2_a_handler_failure_is_told_to_the_model_in_weakincentives_words(error: Exception, message: str) -> None:
    def handler(params: Query, *, context: Any) -> ToolResult[Found]:
        raise error

    completion = Recording(tool_call_completion("search_notes", {"query": "x"}), namespace_completion("sorry"))
    adapter = LiteLLMAdapter(model="gpt-test", completion=completion, throttle_policy=FAST)
    assert adapter.evaluate(search_prompt(handler), session=Session()).text == "sorry"
    tool_message = completion.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and message in str(tool_message["content"])


@pytest.mark.parametrize(
    "answer",
    [SimpleNamespace(), {"choices": "not a list"}, 42],
    ids=["no-choices", "choices-not-a-list", "a-number"],
)
def test_item_2_a_fake_that_is_not_completion_shaped_is_a_typed_evaluation_error(answer: object) -> None:
    adapter = LiteLLMAdapter(model="gpt-test", completion=Recording(answer), throttle_policy=FAST)
    with pytest.raises(PromptEvaluationError):
        adapter.evaluate(greeting(), session=Session())


def test_item_2_a_self_referencing_fake_is_a_typed_error_not_a_recursion_crash() -> None:
    loop = SimpleNamespace()
    loop.choices = [SimpleNamespace(message=loop)]
    adapter = LiteLLMAdapter(model="gpt-test", completion=Recording(loop), throttle_policy=FAST)
    with pytest.raises(PromptEvaluationError, match="nested more than 64 levels"):
        adapter.evaluate(greeting(), session=Session())
