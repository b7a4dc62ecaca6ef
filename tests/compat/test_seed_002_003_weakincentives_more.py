"""Seeds 002/003 on ``llmplex.compat.weakincentives``: tools, budgets, LiteLLM, provider interchangeability.

Every test names the seed section it covers; the provider is the fault-injecting
OpenAI-wire server of ``tests/support``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import llmplex
from llmplex.compat import weakincentives as wi
from llmplex.compat.weakincentives import (
    Budget,
    BudgetTracker,
    LiteLLMAdapter,
    LiteLLMClientConfig,
    LiteLLMModelConfig,
    MarkdownSection,
    Prompt,
    PromptEvaluationError,
    PromptTemplate,
    Session,
    ThrottleError,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from tests.compat.wi_helpers import FAST, KEY, StructuredAnswer, answer_json, greeting, openai_adapter, sent, structured
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer


@dataclass
class ToolParams:
    query: str


@dataclass
class ToolPayload:
    answer: str


def search_prompt(tool: Tool[Any, Any]) -> Prompt[StructuredAnswer]:
    template = PromptTemplate[StructuredAnswer](
        ns="tests/compat",
        key="search",
        name="search",
        sections=(MarkdownSection[ToolParams](title="Task", key="task", template="Look up ${query}", tools=[tool]),),
    )
    return Prompt(template).bind(ToolParams(query="policies"))


def call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Fault:
    return Fault.json(200, fx.response_function_call(fx.FunctionCall(name, json.dumps(arguments), call_id)))


def tool_outputs(server: FaultServer, index: int) -> list[str]:
    return [item["output"] for item in sent(server, index)["input"] if item.get("type") == "function_call_output"]


# --- Inner loop: tools ------------------------------------------------------------------


def test_tool_calls_are_dispatched_and_the_loop_repeats_until_an_answer(fault_server: FaultServer) -> None:
    """Seed 002 § Inner Loop (handle tool calls, loop, parse output) / § Tool Execution / § Telemetry (ToolInvoked)."""
    calls: list[str] = []
    contexts: list[ToolContext] = []

    def handler(params: ToolParams, *, context: ToolContext) -> ToolResult[ToolPayload]:
        calls.append(params.query)
        contexts.append(context)
        return ToolResult.ok(ToolPayload(answer=f"Result for {params.query}"), message="completed")

    tool = Tool[ToolParams, ToolPayload](name="search_notes", description="Search stored notes.", handler=handler)
    fault_server.enqueue(call("search_notes", {"query": "policies"}), Fault.ok(answer_json(answer="Policy summary")))
    session = Session()
    events: list[ToolInvoked] = []
    session.dispatcher.subscribe(ToolInvoked, events.append)
    adapter = openai_adapter(fault_server)
    result = adapter.evaluate(search_prompt(tool), session=session)
    assert result.output == StructuredAnswer(answer="Policy summary") and result.text is None
    assert calls == ["policies"]
    (event,) = events
    assert (event.name, event.params, event.prompt_name, event.adapter) == (
        "search_notes",
        ToolParams("policies"),
        "search",
        "openai",
    )
    assert isinstance(event.result.value, ToolPayload) and event.result.success
    assert event.session_id == session.session_id
    spec = sent(fault_server, 0)["tools"][0]
    assert (spec["type"], spec["name"], spec["description"]) == ("function", "search_notes", "Search stored notes.")
    assert spec["parameters"]["properties"]["query"]["type"] == "string"
    assert sent(fault_server, 0)["tool_choice"] == "auto"
    assert tool_outputs(fault_server, 1) == ['completed\n\n{"answer":"Result for policies"}']
    context = contexts[0]
    assert context.session is session and context.adapter is adapter and context.prompt.name == "search"
    assert context.rendered_prompt is not None and context.rendered_prompt.tools == (tool,)


@pytest.mark.parametrize("outcome", ["raises", "fails"])
def test_tool_failures_go_back_to_the_model_and_never_abort(fault_server: FaultServer, outcome: str) -> None:
    """Seed 002 § Error Propagation (tool failures become ToolResult(success=False) returned to the model)."""

    def handler(params: ToolParams, *, context: ToolContext) -> ToolResult[ToolPayload]:
        if outcome == "raises":
            raise LookupError("index offline")
        return ToolResult.error("no notes match")

    tool = Tool[ToolParams, ToolPayload](name="search_notes", description="Search stored notes.", handler=handler)
    fault_server.enqueue(call("search_notes", {"query": "x"}), Fault.ok(answer_json(answer="sorry")))
    session = Session()
    events: list[ToolInvoked] = []
    session.dispatcher.subscribe(ToolInvoked, events.append)
    result = openai_adapter(fault_server).evaluate(search_prompt(tool), session=session)
    assert result.output == StructuredAnswer("sorry")
    assert not events[0].result.success
    expected = "Tool 'search_notes' execution failed: index offline" if outcome == "raises" else "no notes match"
    assert tool_outputs(fault_server, 1) == [expected]


def test_tool_params_none_and_an_unknown_tool_choice(fault_server: FaultServer) -> None:
    """Seed 002 § Tool Execution (handlers run synchronously) / seed 003 § OpenAI (incompatible tool choice)."""
    tool = Tool[None, ToolPayload](
        name="now", description="The time.", handler=lambda params, *, context: ToolResult.ok(ToolPayload("noon"))
    )
    fault_server.enqueue(call("now", {}), Fault.ok(answer_json(answer="It is noon")))
    assert openai_adapter(fault_server).evaluate(search_prompt(tool), session=Session()).output == StructuredAnswer(
        "It is noon"
    )
    assert tool_outputs(fault_server, 1) == ['OK\n\n{"answer":"noon"}']
    with pytest.raises(PromptEvaluationError) as caught:
        openai_adapter(fault_server, tool_choice="missing_tool").evaluate(search_prompt(tool), session=Session())
    assert caught.value.phase == "request" and fault_server.request_count == 2


def test_tool_results_are_rendered_for_the_model() -> None:
    """Seed 002 § Tool Execution: a value with render() uses it; exclude_value_from_context sends the message only."""

    @dataclass
    class Rendered:
        n: int

        def render(self) -> str:
            return f"n={self.n}"

    assert ToolResult.ok(Rendered(3), "done").tool_message() == "done\n\nn=3"
    assert ToolResult("only", Rendered(3), exclude_value_from_context=True).tool_message() == "only"
    assert ToolResult.ok(None, "").tool_message() == ""
    with pytest.raises(wi.PromptValidationError):
        Tool[int, int](name="bad", description="x", handler=None)


# --- Budget tracking --------------------------------------------------------------------


def test_the_budget_example_records_usage(fault_server: FaultServer) -> None:
    """Seed 002 § Budget Tracking: the documented example; usage is recorded after each provider response."""
    fault_server.enqueue(Fault.ok("hi", usage=fx.TokenUsage(input_tokens=300, output_tokens=40)))
    budget = Budget(
        deadline=wi.Deadline(expires_at=datetime.now(UTC) + timedelta(minutes=5)),
        max_total_tokens=10000,
        max_input_tokens=8000,
        max_output_tokens=2000,
    )
    tracker = BudgetTracker(budget)
    prompt = greeting()
    with prompt.resources:
        response = openai_adapter(fault_server).evaluate(
            prompt, session=Session(), budget=budget, budget_tracker=tracker
        )
        assert prompt.resources.get(BudgetTracker) is tracker
    assert response.text == "hi"
    assert tracker.consumed == wi.TokenUsage(input_tokens=300, output_tokens=40, cached_tokens=0)
    assert tracker.consumed.total_tokens == 340
    tracker.check()


def test_going_over_a_limit_is_a_budget_phase_error(fault_server: FaultServer) -> None:
    """Seed 002 § Budget Tracking (checks limits): consumption over a cap raises PromptEvaluationError(phase budget)."""
    fault_server.enqueue(Fault.ok("hi", usage=fx.TokenUsage(input_tokens=19, output_tokens=10)))
    with pytest.raises(PromptEvaluationError) as caught:
        openai_adapter(fault_server).evaluate(greeting(), session=Session(), budget=Budget(max_total_tokens=20))
    assert caught.value.phase == "budget"
    assert isinstance(caught.value.cause, wi.BudgetExceededError)
    assert caught.value.cause.exceeded_dimension == "total_tokens"


def test_a_shared_tracker_stops_the_next_evaluation_before_sending(fault_server: FaultServer) -> None:
    """Seed 002 § Adapter Protocol (budget_tracker: shared tracker) / § Budget Tracking."""
    tracker = BudgetTracker(Budget(max_output_tokens=10))
    fault_server.enqueue(Fault.ok("one", usage=fx.TokenUsage(input_tokens=19, output_tokens=10)), Fault.ok("two"))
    adapter = openai_adapter(fault_server)
    assert adapter.evaluate(greeting(), session=Session(), budget_tracker=tracker).text == "one"
    with pytest.raises(PromptEvaluationError) as caught:
        adapter.evaluate(greeting(), session=Session(), budget_tracker=tracker)
    assert caught.value.phase == "budget" and fault_server.request_count == 1


def test_budget_tracking_is_thread_safe(fault_server: FaultServer) -> None:
    """Seed 002 § Budget Tracking: budget tracking is thread-safe for concurrent execution."""
    tracker = BudgetTracker(Budget(max_total_tokens=10**6))
    adapter = openai_adapter(fault_server)
    threads = [
        threading.Thread(target=lambda: adapter.evaluate(greeting(), session=Session(), budget_tracker=tracker))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    usage = fx.TokenUsage()
    assert tracker.consumed.input_tokens == 6 * usage.input_tokens
    assert tracker.consumed.output_tokens == 6 * usage.output_tokens
    tracker.record_cumulative("manual", wi.TokenUsage(input_tokens=5, output_tokens=1))
    tracker.record_cumulative("manual", wi.TokenUsage(input_tokens=7, output_tokens=1))
    assert tracker.consumed.input_tokens == 6 * usage.input_tokens + 7


def test_budget_validation_and_deadline_dimension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 002 § Budget Tracking: a budget needs a limit, token limits are positive, a passed deadline is exceeded."""
    with pytest.raises(ValueError, match="at least one limit"):
        Budget()
    with pytest.raises(ValueError, match="max_total_tokens"):
        Budget(max_total_tokens=0)
    tracker = BudgetTracker(Budget(deadline=wi.Deadline(expires_at=datetime.now(UTC) + timedelta(seconds=2))))
    later = datetime.now(UTC) + timedelta(seconds=5)
    monkeypatch.setattr("llmplex.compat.weakincentives.budget._utcnow", lambda: later)
    with pytest.raises(wi.BudgetExceededError, match="deadline"):
        tracker.check()


# --- LiteLLM adapter and interchangeability --------------------------------------------


def litellm_adapter(server: FaultServer, **options: Any) -> LiteLLMAdapter:
    return LiteLLMAdapter(
        model="openai/gpt-test",
        completion_config=LiteLLMClientConfig(api_key=KEY, api_base=server.url, timeout=30.0),
        throttle_policy=FAST,
        **options,
    )


def test_litellm_adapter_reaches_an_openai_compatible_server(fault_server: FaultServer) -> None:
    """Seed 002 § LiteLLM Adapter: LiteLLMClientConfig(api_base=...) with model="openai/...", model parameters."""
    fault_server.enqueue(Fault.ok("Hello via LiteLLM"))
    adapter = litellm_adapter(fault_server, model_config=LiteLLMModelConfig(temperature=0.5, max_tokens=2048, n=1))
    result = adapter.evaluate(greeting(), session=Session())
    assert result.text == "Hello via LiteLLM" and result.prompt_name == "greeting"
    request = fault_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = sent(fault_server)
    assert (body["model"], body["temperature"], body["max_tokens"], body["n"]) == ("gpt-test", 0.5, 2048, 1)
    assert body["messages"][0] == {"role": "system", "content": "## 1. Greeting (greeting)\n\nSay hello to Sam."}


def test_litellm_structured_output_and_normalized_errors(fault_server: FaultServer) -> None:
    """Seed 002 § LiteLLM Adapter (structured output from text; exceptions normalized to ThrottleError or
    PromptEvaluationError)."""
    fault_server.enqueue(Fault.ok(answer_json(answer="from text")))
    assert litellm_adapter(fault_server).evaluate(structured(), session=Session()).output == StructuredAnswer(
        "from text"
    )
    fault_server.enqueue(*[Fault.rate_limit()] * 5)
    with pytest.raises(ThrottleError) as throttled:
        litellm_adapter(fault_server).evaluate(greeting(), session=Session())
    assert (throttled.value.kind, throttled.value.attempts, throttled.value.retry_safe) == ("rate_limit", 5, False)
    fault_server.enqueue(Fault.json(400, fx.context_length_exceeded_error()))
    with pytest.raises(PromptEvaluationError) as failed:
        litellm_adapter(fault_server).evaluate(greeting(), session=Session())
    assert failed.value.phase == "request" and not isinstance(failed.value, ThrottleError)


def test_litellm_completion_is_exclusive_with_its_factory_and_config() -> None:
    """Seed 002 § LiteLLM Adapter (completion, completion_factory): an explicit completion excludes the others."""
    with pytest.raises(ValueError, match="completion_kwargs"):
        LiteLLMAdapter(model="openai/x", completion=lambda **kwargs: None, completion_kwargs={"a": 1})
    with pytest.raises(llmplex.LLMConfigurationError, match="completion_config"):
        LiteLLMAdapter(model="openai/x", completion=lambda **kwargs: None, completion_config=LiteLLMClientConfig())
    assert KEY not in repr(LiteLLMClientConfig(api_key=KEY))


def test_both_adapters_give_the_same_response_for_the_same_prompt(fault_server: FaultServer) -> None:
    """Seed 003 § Provider interchangeability: swapping adapters does not change the call site or the result."""
    results = []
    for make in (openai_adapter, litellm_adapter):
        fault_server.enqueue(Fault.ok(answer_json(answer="same")))
        results.append(make(fault_server).evaluate(structured(), session=Session()))
    assert results[0] == results[1] == wi.PromptResponse("structured", None, StructuredAnswer("same"))


def test_a_disabled_provider_raises_an_actionable_request_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 003 § Constraints (optional dependencies: guards raise actionable errors)."""
    monkeypatch.setenv("LLMPLEX_DISABLED", "litellm")
    with pytest.raises(PromptEvaluationError) as caught:
        LiteLLMAdapter(model="openai/x").evaluate(greeting(), session=Session())
    assert caught.value.phase == "request" and "disabled" in str(caught.value)
    assert isinstance(caught.value.cause, llmplex.LLMConfigurationError)


def test_tools_with_unusable_params_are_refused_when_built() -> None:
    """Seed 002 § Tool Execution (params are dataclasses with a schema), hostile input: a clear error up front."""

    @dataclass
    class Opaque:
        handle: threading.Lock

    with pytest.raises(wi.PromptValidationError, match="no JSON Schema"):
        Tool[Opaque, ToolPayload](name="grab", description="x", handler=None)

    def untyped(params: Missing, *, context: ToolContext) -> ToolResult[Any]:  # type: ignore[name-defined]  # noqa: F821
        return ToolResult.error("never")

    with pytest.raises(wi.PromptValidationError, match="cannot read the handler's params type"):
        Tool(name="untyped", description="x", handler=untyped)
