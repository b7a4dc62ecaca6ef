"""Issue 23 item 1: weakincentives' client hooks and session state, written as weakincentives' own tests are.

The fakes follow weakincentives' test doubles (a client whose ``responses.create``
records its keyword arguments; a ``RecordingCompletion`` standing in for
``litellm.completion``); only the imports point at ``llmplex.compat``.
Seed 003 § OpenAI: "optional client hooks (client, client_factory, client_kwargs)";
§ LiteLLM: "an optional completion callable (completion, completion_factory,
completion_kwargs)"; seed 002 § Implementing New Adapters: "Accept either
concrete client or config so tests can inject fakes".
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from llmplex.compat.weakincentives import (
    Budget,
    BudgetTracker,
    Deadline,
    DeadlineExceededError,
    LiteLLMAdapter,
    LiteLLMClientConfig,
    MarkdownSection,
    OpenAIAdapter,
    OpenAIModelConfig,
    Prompt,
    PromptEvaluationError,
    PromptExecuted,
    PromptRendered,
    PromptTemplate,
    Replace,
    Session,
    SessionProtocol,
    ThrottleError,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
    new_throttle_policy,
    replace_latest,
)
from tests.support.fault_server import FaultServer

FAST = new_throttle_policy(base_delay=timedelta(milliseconds=1), max_delay=timedelta(milliseconds=2))


@dataclass
class ToolParams:
    query: str


@dataclass
class ToolPayload:
    answer: str


@dataclass
class StructuredAnswer:
    answer: str


class Obj:
    """An attribute bag, as the SDK's response objects are to the adapter."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class DummyResponsesAPI:
    def __init__(self, responses: Sequence[object]) -> None:
        self._responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def create(self, **kwargs: Any) -> object:
        self.requests.append(kwargs)
        if not self._responses:
            raise AssertionError("No responses available")
        answer = self._responses.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class DummyOpenAIClient:
    def __init__(self, responses: Sequence[object]) -> None:
        self.responses = DummyResponsesAPI(responses)


class RecordingCompletion:
    """Test double that mimics litellm.completion."""

    def __init__(self, responses: Sequence[object]) -> None:
        self._responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> object:
        self.requests.append(kwargs)
        answer = self._responses.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class RateLimitError(Exception):
    """What an SDK raises on HTTP 429 (weakincentives reads status_code and the Retry-After header)."""

    def __init__(self, message: str = "slow down") -> None:
        super().__init__(message)
        self.status_code = 429
        self.headers = {"retry-after": "0"}


def text_response(text: str) -> Obj:
    return Obj(output=[Obj(type="message", content=[Obj(type="output_text", text=text)])], usage=None)


def call_response(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Obj:
    return Obj(output=[Obj(type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments))])


def chat_response(content: str | None, tool_calls: list[Obj] | None = None) -> Obj:
    return Obj(choices=[Obj(message=Obj(content=content, tool_calls=tool_calls))])


def handler(params: ToolParams, *, context: ToolContext) -> ToolResult[ToolPayload]:
    assert context.session is not None
    return ToolResult(message="completed", value=ToolPayload(answer=f"Result for {params.query}"))


def search_prompt() -> Prompt[StructuredAnswer]:
    tool = Tool[ToolParams, ToolPayload](name="search_notes", description="Search stored notes.", handler=handler)
    template = PromptTemplate[StructuredAnswer](
        ns="tests/adapters/openai",
        key="openai-structured-success",
        name="search",
        sections=(MarkdownSection[ToolParams](title="Task", key="task", template="Look up ${query}", tools=[tool]),),
    )
    return Prompt(template).bind(ToolParams(query="policies"))


def greeting_prompt() -> Prompt[Any]:
    template = PromptTemplate(
        ns="tests/adapters/openai",
        key="openai-greeting",
        name="greeting",
        sections=(MarkdownSection[ToolParams](title="Greeting", key="greeting", template="Say hello to ${query}."),),
    )
    return Prompt(template).bind(ToolParams(query="Sam"))


def test_item_1_injected_openai_client_sees_the_responses_request_and_the_session_records_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # an injected client needs no key
    client = DummyOpenAIClient(
        [call_response("search_notes", {"query": "policies"}), text_response(json.dumps({"answer": "Policy summary"}))]
    )
    adapter = OpenAIAdapter(model="gpt-test", client=client, model_config=OpenAIModelConfig(max_tokens=64))
    session = Session()
    tool_events: list[ToolInvoked] = []
    session.dispatcher.subscribe(ToolInvoked, tool_events.append)

    result = adapter.evaluate(search_prompt(), session=session)

    assert result.output == StructuredAnswer(answer="Policy summary") and result.text is None
    first, second = client.responses.requests
    assert first["model"] == "gpt-test" and first["max_output_tokens"] == 64
    assert first["input"] == [{"type": "message", "role": "system", "content": "## 1. Task (task)\n\nLook up policies"}]
    assert [t["name"] for t in first["tools"]] == ["search_notes"] and first["tool_choice"] == "auto"
    assert first["text"]["format"]["type"] == "json_schema"
    assert "timeout" not in first and "extra_body" not in first  # only what the original adapter sent
    assert second["input"][-1]["type"] == "function_call_output" and second["input"][-1]["call_id"] == "call_1"
    assert second["input"][-1]["output"].startswith("completed")
    assert [event.name for event in tool_events] == ["search_notes"]
    executed = session[PromptExecuted].latest()
    assert executed is not None and executed.result is result
    assert session[PromptRendered].latest() is not None and len(session[ToolInvoked].all()) == 1
    assert session[StructuredAnswer].latest() == StructuredAnswer(answer="Policy summary")
    assert session[ToolPayload].all() == (ToolPayload(answer="Result for policies"),)


def test_item_1_client_factory_gets_client_kwargs_and_the_hooks_exclude_each_other() -> None:
    captured: list[dict[str, object]] = []
    client = DummyOpenAIClient([text_response("Hello again!")])

    def fake_factory(**kwargs: object) -> DummyOpenAIClient:
        captured.append(dict(kwargs))
        return client

    adapter = OpenAIAdapter(model="gpt-test", client_factory=fake_factory, client_kwargs={"api_key": "secret-key"})
    assert adapter.evaluate(greeting_prompt(), session=Session()).text == "Hello again!"
    assert captured == [{"api_key": "secret-key"}]
    with pytest.raises(ValueError, match="client_kwargs"):
        OpenAIAdapter(model="gpt-test", client=client, client_kwargs={"api_key": "secret"})
    with pytest.raises(ValueError, match="client_factory"):
        OpenAIAdapter(model="gpt-test", client=client, client_factory=lambda **_: client)
    with pytest.raises(ValueError, match=r"responses\.create"):
        OpenAIAdapter(model="gpt-test", client=object())
    with pytest.raises(ValueError, match="not settings") as bad:
        OpenAIAdapter(model="gpt-test", client_kwargs={"http_client": object(), "api_key": "sk-never-shown"})
    assert "sk-never-shown" not in str(bad.value)


def test_item_1_engine_retries_and_throttles_around_the_injected_client(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="llmplex")
    client = DummyOpenAIClient([RateLimitError(), text_response("after one retry")])
    adapter = OpenAIAdapter(model="gpt-test", client=client, throttle_policy=FAST)
    assert adapter.evaluate(greeting_prompt(), session=Session()).text == "after one retry"
    assert len(client.responses.requests) == 2
    assert "prompt.throttled" in caplog.text  # llmplex's own event, logged around the injected client

    always = DummyOpenAIClient([RateLimitError() for _ in range(3)])
    limited = OpenAIAdapter(
        model="gpt-test", client=always, throttle_policy=new_throttle_policy(max_attempts=3, base_delay=FAST.base_delay)
    )
    with pytest.raises(ThrottleError) as raised:
        limited.evaluate(greeting_prompt(), session=Session())
    assert raised.value.kind == "rate_limit" and raised.value.attempts == 3 and raised.value.retry_safe is False
    assert len(always.responses.requests) == 3


def test_item_1_quota_and_unknown_failures_of_the_fake_are_typed_and_not_retried() -> None:
    quota = DummyOpenAIClient([RuntimeError("You exceeded your current quota: insufficient_quota")])
    with pytest.raises(ThrottleError) as raised:
        OpenAIAdapter(model="gpt-test", client=quota, throttle_policy=FAST).evaluate(
            greeting_prompt(), session=Session()
        )
    assert raised.value.kind == "quota_exhausted" and len(quota.responses.requests) == 1

    broken = DummyOpenAIClient([ValueError("socket closed"), Obj(nothing="here")])
    with pytest.raises(PromptEvaluationError) as failed:
        OpenAIAdapter(model="gpt-test", client=broken, throttle_policy=FAST).evaluate(
            greeting_prompt(), session=Session()
        )
    assert failed.value.phase == "request" and isinstance(failed.value.__cause__, Exception)

    garbage = DummyOpenAIClient([Obj(nothing="here")])
    with pytest.raises(PromptEvaluationError):
        OpenAIAdapter(model="gpt-test", client=garbage, throttle_policy=FAST).evaluate(
            greeting_prompt(), session=Session()
        )


def test_item_1_a_spent_budget_stops_the_next_call_before_the_fake_is_called() -> None:
    answer = text_response("hi")
    answer.usage = Obj(input_tokens=40, output_tokens=10, total_tokens=50)
    client = DummyOpenAIClient([answer, text_response("never sent")])
    adapter = OpenAIAdapter(model="gpt-test", client=client)
    tracker = BudgetTracker(Budget(max_total_tokens=20))
    with pytest.raises(PromptEvaluationError) as first:
        adapter.evaluate(greeting_prompt(), session=Session(), budget_tracker=tracker)
    assert first.value.phase == "budget"
    with pytest.raises(PromptEvaluationError) as second:
        adapter.evaluate(greeting_prompt(), session=Session(), budget_tracker=tracker)
    assert second.value.phase == "budget" and len(client.responses.requests) == 1


def test_item_1_injected_litellm_completion_sees_the_chat_request() -> None:
    tool_call = Obj(id="call_1", function=Obj(name="search_notes", arguments=json.dumps({"query": "policies"})))
    completion = RecordingCompletion(
        [chat_response("thinking", [tool_call]), chat_response(json.dumps({"answer": "Policy summary"}))]
    )
    adapter = LiteLLMAdapter(model="openai/gpt-test", completion=completion)
    session = Session()
    result = adapter.evaluate(search_prompt(), session=session)
    assert result.output == StructuredAnswer(answer="Policy summary")
    first, second = completion.requests
    assert first["model"] == "openai/gpt-test" and first["messages"][0]["role"] == "system"
    assert first["tools"][0]["function"]["name"] == "search_notes" and first["tool_choice"] == "auto"
    assert "response_format" in first
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["tool_call_id"] == "call_1"
    assert session[PromptExecuted].latest().result is result  # type: ignore[union-attr]


def test_item_1_completion_factory_gets_the_config_and_completion_kwargs() -> None:
    captured: list[dict[str, object]] = []
    completion = RecordingCompletion([chat_response("Hello!")])

    def factory(**kwargs: object) -> RecordingCompletion:
        captured.append(dict(kwargs))
        return completion

    adapter = LiteLLMAdapter(
        model="openai/gpt-test",
        completion_factory=factory,
        completion_kwargs={"temperature": 0.1},
        completion_config=LiteLLMClientConfig(api_key="sk-lite", timeout=30.0),
    )
    assert adapter.evaluate(greeting_prompt(), session=Session()).text == "Hello!"
    assert captured == [{"api_key": "sk-lite", "timeout": 30.0, "temperature": 0.1}]


def test_item_1_session_satisfies_session_protocol_with_reducers_snapshots_and_reset() -> None:
    session = Session()
    assert isinstance(session, SessionProtocol)
    session[ToolPayload].register(ToolPayload, replace_latest)
    session.dispatch(ToolPayload(answer="one"))
    session.dispatch(ToolPayload(answer="two"))
    assert session[ToolPayload].all() == (ToolPayload(answer="two"),)
    snapshot = session.snapshot(tag="before")
    session[ToolPayload].seed(ToolPayload(answer="seeded"))
    assert session[ToolPayload].where(lambda p: p.answer == "seeded")
    session.restore(snapshot)
    assert session[ToolPayload].latest() == ToolPayload(answer="two")
    session[StructuredAnswer].register(ToolPayload, lambda view, event, *, context: Replace((StructuredAnswer("x"),)))
    session.dispatch(ToolPayload(answer="three"))
    assert session[StructuredAnswer].latest() == StructuredAnswer("x")

    def broken(view: object, event: object, *, context: object) -> object:
        raise RuntimeError("reducer bug")

    session[ToolParams].register(ToolParams, broken)
    assert session.dispatch(ToolParams(query="q")).ok  # a failing reducer is logged, the dispatch goes on
    session.install(ToolParams, initial=lambda: ToolParams(query="initial"))
    assert session[ToolParams].latest() == ToolParams(query="initial")
    session.reset()
    assert session[ToolPayload].all() == () and session[StructuredAnswer].all() == ()
    child = Session(parent=session)
    assert session.children == (child,) and child.parent is session and child.tags["parent_session_id"]


@dataclass(frozen=True)
class Note:
    text: str


def test_item_1_a_failed_tool_leaves_no_trace_in_session_state(caplog: pytest.LogCaptureFixture) -> None:
    """Seed 002 § Transactional Tool Execution: on an exception or success=False the session is restored."""

    def writes_then_fails(params: ToolParams, *, context: ToolContext) -> ToolResult[ToolPayload]:
        context.session.dispatch(Note("written by the failing tool"))
        raise RuntimeError("tool bug")

    def writes_then_refuses(params: ToolParams, *, context: ToolContext) -> ToolResult[ToolPayload]:
        context.session[Note].append(Note("written by the refusing tool"))
        return ToolResult(message="no", value=None, success=False)

    def writes_and_succeeds(params: ToolParams, *, context: ToolContext) -> ToolResult[ToolPayload]:
        context.session.dispatch(Note("kept"))
        return ToolResult(message="ok", value=ToolPayload(answer="fine"))

    outcomes = []
    for handler_fn in (writes_then_fails, writes_then_refuses, writes_and_succeeds):
        tool = Tool[ToolParams, ToolPayload](name="search_notes", description="Search notes.", handler=handler_fn)
        template = PromptTemplate(
            ns="tests/adapters/openai",
            key="tx",
            name="tx",
            sections=(MarkdownSection[ToolParams](title="T", key="t", template="${query}", tools=[tool]),),
        )
        client = DummyOpenAIClient([call_response("search_notes", {"query": "q"}), text_response("done")])
        session = Session()
        session[Note].seed(Note("before"))
        with caplog.at_level(logging.DEBUG, logger="llmplex.compat.weakincentives"):
            result = OpenAIAdapter(model="gpt-test", client=client).evaluate(
                Prompt(template).bind(ToolParams(query="q")), session=session
            )
        assert result.text == "done"
        outcomes.append(session[Note].all())
        assert len(session[ToolInvoked].all()) == 1  # the telemetry log is never rolled back
    assert outcomes == [(Note("before"),), (Note("before"),), (Note("before"), Note("kept"))]
    for event in ("prompt.render.start", "prompt.render.complete", "prompt.call.complete"):
        assert event in caplog.messages  # seed 002 § Telemetry, structured logs


def test_item_1_a_hanging_injected_client_ends_at_the_deadline() -> None:
    """Seed 002 § Backoff Strategy (deadline awareness): llmplex's deadline bounds the injected call too."""
    release = threading.Event()

    class Hanging(DummyResponsesAPI):
        def create(self, **kwargs: Any) -> object:
            self.requests.append(kwargs)
            release.wait(30)
            return text_response("too late")

    client = DummyOpenAIClient([])
    client.responses = Hanging([])
    adapter = OpenAIAdapter(model="gpt-test", client=client)
    prompt, session = greeting_prompt(), Session()
    started = time.monotonic()
    try:
        with pytest.raises(DeadlineExceededError):
            adapter.evaluate(
                prompt, session=session, deadline=Deadline(expires_at=datetime.now(UTC) + timedelta(seconds=1.5))
            )
        assert time.monotonic() - started < 8.0  # the fake would hang for 30 s
        assert session[PromptExecuted].all() == ()
    finally:
        release.set()


def test_item_1_litellm_failures_of_the_injected_completion_are_retried_and_normalized() -> None:
    """Seed 002 § LiteLLM: exceptions are normalized to ThrottleError or PromptEvaluationError."""
    completion = RecordingCompletion([RateLimitError(), chat_response("after a retry")])
    adapter = LiteLLMAdapter(model="openai/gpt-test", completion=completion, throttle_policy=FAST)
    assert adapter.evaluate(greeting_prompt(), session=Session()).text == "after a retry"
    assert len(completion.requests) == 2

    class APITimeoutError(Exception):
        pass

    slow = RecordingCompletion([APITimeoutError("read timed out") for _ in range(2)])
    limited = LiteLLMAdapter(
        model="openai/gpt-test",
        completion=slow,
        throttle_policy=new_throttle_policy(max_attempts=2, base_delay=FAST.base_delay),
    )
    with pytest.raises(ThrottleError) as raised:
        limited.evaluate(greeting_prompt(), session=Session())
    assert raised.value.kind == "timeout" and len(slow.requests) == 2

    broken = RecordingCompletion([KeyError("choices")])
    with pytest.raises(PromptEvaluationError) as failed:
        LiteLLMAdapter(model="openai/gpt-test", completion=broken).evaluate(greeting_prompt(), session=Session())
    assert failed.value.phase == "request" and len(broken.requests) == 1


def test_item_1_a_real_openai_client_can_be_injected(fault_server: FaultServer) -> None:
    """Seed 003 § OpenAI (client hooks): a configured ``openai.OpenAI`` is called, its errors classified by llmplex."""
    import openai

    from tests.support.fault_server import Fault

    fault_server.enqueue(Fault.rate_limit(retry_after=0), Fault.ok("from the SDK client"))
    client = openai.OpenAI(base_url=fault_server.url, api_key="sk-injected-0123456789", max_retries=0)
    adapter = OpenAIAdapter(model="gpt-test", client=client, throttle_policy=FAST)
    assert adapter.evaluate(greeting_prompt(), session=Session()).text == "from the SDK client"
    assert fault_server.request_count == 2 and fault_server.requests[-1].path == "/v1/responses"
