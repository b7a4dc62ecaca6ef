"""Seeds 002 (weakincentives ``specs/ADAPTERS.md``) and 003 (adapter architecture) on ``llmplex.compat.weakincentives``.

Every test names the seed section it covers. The provider is the fault-injecting
OpenAI-wire server of ``tests/support`` (Responses API for ``OpenAIAdapter``).
Deadlines, rendering, errors and concurrency are in ``test_seed_002_003_weakincentives_rest.py``; tools, budgets
and LiteLLM in ``test_seed_002_003_weakincentives_more.py``.
"""

from __future__ import annotations

import dataclasses
import inspect
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import llmplex
from llmplex.compat import weakincentives as wi
from llmplex.compat.weakincentives import (
    LLMConfig,
    OpenAIAdapter,
    OpenAIClientConfig,
    OpenAIModelConfig,
    OutputParseError,
    PromptEvaluationError,
    PromptExecuted,
    PromptRendered,
    ProviderAdapter,
    Session,
    ThrottleError,
    new_throttle_policy,
)
from tests.compat.wi_helpers import (
    FAST,
    KEY,
    GreetingParams,
    SleepLog,
    StructuredAnswer,
    answer_json,
    client_on,
    greeting,
    openai_adapter,
    sent,
    structured,
)
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

# --- Adapter Protocol -------------------------------------------------------------------


def test_evaluate_takes_the_documented_parameters() -> None:
    """Seed 002 § Adapter Protocol: evaluate(prompt, *, session, deadline=None, budget=None, budget_tracker=None)."""
    parameters = inspect.signature(ProviderAdapter.evaluate).parameters
    assert list(parameters) == ["self", "prompt", "session", "deadline", "budget", "budget_tracker"]
    assert [p.kind for p in parameters.values()][2:] == [inspect.Parameter.KEYWORD_ONLY] * 4
    assert [parameters[n].default for n in ("deadline", "budget", "budget_tracker")] == [None, None, None]
    with pytest.raises(TypeError):
        ProviderAdapter()  # type: ignore[abstract]


def test_a_custom_adapter_implements_the_protocol() -> None:
    """Seed 002 § Adapter Protocol / § Implementing New Adapters: subclasses provide evaluate."""

    class Echo(ProviderAdapter[Any]):
        def evaluate(self, prompt: Any, *, session: Any, deadline: Any = None, **_: Any) -> wi.PromptResponse[Any]:
            return wi.PromptResponse(prompt_name="echo", text=prompt.render().text, output=None)

    result = Echo().evaluate(greeting(), session=Session())
    assert result.text == "## 1. Greeting (greeting)\n\nSay hello to Sam."


def test_plain_prompt_returns_text_and_sends_the_rendered_markdown(fault_server: FaultServer) -> None:
    """Seed 002 § Lifecycle (render, format, call, parse) / § OpenAI Adapter: Responses API, text answer."""
    fault_server.enqueue(Fault.ok("Hello, Sam!"))
    result = openai_adapter(fault_server).evaluate(greeting(), session=Session())
    assert result == wi.PromptResponse(prompt_name="greeting", text="Hello, Sam!", output=None)
    request = fault_server.requests[0]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = sent(fault_server)
    assert body["model"] == "gpt-test"
    assert body["input"] == [
        {"type": "message", "role": "system", "content": "## 1. Greeting (greeting)\n\nSay hello to Sam."}
    ]
    assert "tools" not in body


def test_events_are_published_in_lifecycle_order(fault_server: FaultServer) -> None:
    """Seed 002 § Lifecycle (Emit) / § Telemetry: PromptRendered after render, PromptExecuted after parse."""
    fault_server.enqueue(Fault.ok("Hello, Sam!", usage=fx.TokenUsage(input_tokens=12, output_tokens=4)))
    session = Session()
    seen: list[Any] = []
    session.dispatcher.subscribe(PromptRendered, seen.append)
    session.dispatcher.subscribe(PromptExecuted, seen.append)
    result = openai_adapter(fault_server).evaluate(greeting(), session=session)
    rendered, executed = seen
    assert isinstance(rendered, PromptRendered) and isinstance(executed, PromptExecuted)
    assert (rendered.prompt_ns, rendered.prompt_key, rendered.prompt_name) == ("tests/compat", "greeting", "greeting")
    assert rendered.adapter == wi.OPENAI_ADAPTER_NAME
    assert rendered.rendered_prompt == "## 1. Greeting (greeting)\n\nSay hello to Sam."
    assert rendered.render_inputs == (GreetingParams(user="Sam"),)
    assert rendered.session_id == session.session_id == executed.session_id
    assert executed.result is result
    assert executed.usage == wi.TokenUsage(input_tokens=12, output_tokens=4, cached_tokens=0)
    assert executed.usage.total_tokens == 16


def test_failing_event_handlers_do_not_stop_the_evaluation(fault_server: FaultServer) -> None:
    """Seed 002 § Telemetry: a handler that raises is reported by dispatch and the other handlers still run."""
    fault_server.enqueue(Fault.ok("hi"))
    session = Session()
    later: list[object] = []

    def broken(event: object) -> None:
        raise RuntimeError("handler bug")

    session.dispatcher.subscribe(PromptExecuted, broken)
    session.dispatcher.subscribe(PromptExecuted, later.append)
    assert openai_adapter(fault_server).evaluate(greeting(), session=session).text == "hi"
    assert len(later) == 1
    result = session.dispatcher.dispatch(PromptExecuted("p", "openai", None, None, datetime.now(UTC)))
    # the session's own slice recorder, then the two handlers subscribed here
    assert not result.ok and result.handled_count == 3 and isinstance(result.errors[0].error, RuntimeError)


# --- Configuration ----------------------------------------------------------------------


def test_only_fields_that_are_set_reach_the_payload(fault_server: FaultServer) -> None:
    """Seed 002 § Configuration: frozen dataclass configs; only non-None fields are in request payloads."""
    config = OpenAIModelConfig(temperature=0.7, max_tokens=1024, parallel_tool_calls=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.temperature = 1.0  # type: ignore[misc]
    fault_server.enqueue(Fault.ok(), Fault.ok())
    openai_adapter(fault_server, model_config=config).evaluate(greeting(), session=Session())
    body = sent(fault_server)
    assert {k: body[k] for k in ("temperature", "max_output_tokens")} == {"temperature": 0.7, "max_output_tokens": 1024}
    assert not {"top_p", "seed", "stop", "max_tokens", "parallel_tool_calls", "store", "user"} & set(body)
    assert LLMConfig(stop=("END",)).to_request_params() == {"stop": ["END"]}
    assert config.to_request_params() == {"temperature": 0.7, "max_output_tokens": 1024}


def test_the_openai_example_configuration(fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 002 § OpenAI Adapter: the documented example, client and model parameters, Responses API options."""
    monkeypatch.setenv("OPENAI_BASE_URL", fault_server.url)
    client_config = OpenAIClientConfig(api_key=KEY, timeout=30.0)
    model_config = OpenAIModelConfig(
        temperature=0.7, max_tokens=1024, logprobs=True, top_logprobs=2, store=False, user="u-1"
    )
    adapter = OpenAIAdapter(model="gpt-4o", client_config=client_config, model_config=model_config)
    fault_server.enqueue(Fault.ok())
    adapter.evaluate(greeting(), session=Session())
    body = sent(fault_server)
    assert body["model"] == "gpt-4o"
    expected = {"logprobs": True, "top_logprobs": 2, "parallel_tool_calls": True, "store": False, "user": "u-1"}
    assert {k: body[k] for k in expected} == expected
    assert KEY not in repr(client_config) and KEY not in repr(adapter)


def test_key_and_endpoint_fall_back_to_the_environment(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 002 § OpenAI Adapter (api_key falls back to env): OPENAI_API_KEY and OPENAI_BASE_URL, Responses API."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fault_server.url)
    fault_server.enqueue(Fault.ok("from env"))
    assert OpenAIAdapter(model="gpt-test").evaluate(greeting(), session=Session()).text == "from env"
    assert fault_server.requests[0].path == "/v1/responses"
    assert fault_server.requests[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("field", ["seed", "stop", "presence_penalty", "frequency_penalty"])
def test_responses_api_rejects_unsupported_parameters_at_construction(field: str) -> None:
    """Seed 002 § OpenAI Adapter note: seed/stop/presence_penalty/frequency_penalty raise ValueError."""
    value: Any = ("x",) if field == "stop" else 1
    with pytest.raises(ValueError, match=field) as caught:
        OpenAIModelConfig(**{field: value})
    assert isinstance(caught.value, llmplex.LLMConfigurationError)


def test_explicit_client_and_client_config_are_exclusive(fault_server: FaultServer) -> None:
    """Seed 003 § OpenAI (client hooks): client and client_config together is a ValueError; an llmplex Client works."""
    with pytest.raises(ValueError, match="client_config"):
        OpenAIAdapter(model="m", client=client_on(fault_server), client_config=OpenAIClientConfig())
    with pytest.raises(llmplex.LLMConfigurationError, match=r"responses\.create"):
        OpenAIAdapter(model="m", client=object())
    fault_server.enqueue(Fault.ok("via client"))
    adapter = OpenAIAdapter(model="gpt-test", client=client_on(fault_server))
    assert adapter.evaluate(greeting(), session=Session()).text == "via client"


# --- Structured output ------------------------------------------------------------------


def test_structured_output_uses_native_json_schema_and_parses_the_dataclass(fault_server: FaultServer) -> None:
    """Seed 002 § OpenAI Adapter (Structured Output) / seed 003 § Structured output fidelity."""
    fault_server.enqueue(Fault.ok(answer_json(answer="Policy summary")))
    result = openai_adapter(fault_server).evaluate(structured(), session=Session())
    assert result.output == StructuredAnswer(answer="Policy summary")
    assert result.text is None
    text_format = sent(fault_server)["text"]["format"]
    assert text_format["type"] == "json_schema" and text_format["name"] == "StructuredAnswer"
    assert text_format["schema"]["properties"]["answer"]["type"] == "string"


def test_array_output_is_a_list_of_dataclasses(fault_server: FaultServer) -> None:
    """Seed 002 § OpenAI Adapter (Structured Output): PromptTemplate[list[Out]] declares an array container."""
    fault_server.enqueue(Fault.ok(answer_json(items=[{"answer": "a"}, {"answer": "b"}])))
    result = openai_adapter(fault_server).evaluate(structured(list[StructuredAnswer]), session=Session())
    assert result.output == [StructuredAnswer("a"), StructuredAnswer("b")]


def test_invalid_structured_output_raises_output_parse_error(fault_server: FaultServer) -> None:
    """Seed 002 § Error Propagation: parse failures raise OutputParseError (phase response) with the raw answer."""
    fault_server.enqueue(Fault.ok('{"wrong": 1}'))
    with pytest.raises(OutputParseError) as caught:
        openai_adapter(fault_server).evaluate(structured(), session=Session())
    error = caught.value
    assert isinstance(error, PromptEvaluationError) and error.phase == "response"
    assert error.dataclass_type is StructuredAnswer
    assert isinstance(error.cause, llmplex.LLMOutputParseError) and '"wrong"' in error.cause.raw_text


# --- Rate limiting and throttling -------------------------------------------------------


def test_new_throttle_policy_example_and_defaults() -> None:
    """Seed 002 § Throttle Policy: the example, the documented defaults, and validation."""
    policy = new_throttle_policy(
        max_attempts=5,
        base_delay=timedelta(milliseconds=500),
        max_delay=timedelta(seconds=8),
        max_total_delay=timedelta(seconds=30),
    )
    assert policy == wi.ThrottlePolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.max_total_delay) == (
        5,
        timedelta(milliseconds=500),
        timedelta(seconds=8),
        timedelta(seconds=30),
    )
    assert policy.engine_policy() == llmplex.ThrottlePolicy()
    for bad in ({"max_attempts": 0}, {"base_delay": timedelta(0)}, {"max_total_delay": timedelta(seconds=-1)}):
        with pytest.raises(ValueError, match="Throttle"):
            new_throttle_policy(**bad)


def test_rate_limits_are_retried_and_recover(fault_server: FaultServer) -> None:
    """Seed 002 § Signal Classification (rate limit: retry with backoff) / § Testing (artificial 429s)."""
    fault_server.enqueue(Fault.rate_limit(), Fault.rate_limit(), Fault.ok("recovered"))
    result = openai_adapter(fault_server).evaluate(greeting(), session=Session())
    assert result.text == "recovered"
    assert fault_server.request_count == 3


def test_max_attempts_five_means_five_requests_then_throttle_error(fault_server: FaultServer) -> None:
    """Seed 002 § ThrottleError / § Error Propagation: exhaustion raises ThrottleError, retry_safe=False."""
    fault_server.enqueue(*[Fault.rate_limit(retry_after_ms=1)] * 6)
    policy = new_throttle_policy(max_attempts=5, base_delay=timedelta(milliseconds=1))
    with pytest.raises(ThrottleError) as caught:
        openai_adapter(fault_server, throttle_policy=policy).evaluate(greeting(), session=Session())
    error = caught.value
    assert fault_server.request_count == 5
    assert (error.kind, error.attempts, error.retry_safe, error.phase) == ("rate_limit", 5, False, "request")
    assert error.retry_after == timedelta(milliseconds=1)
    assert error.details == wi.ThrottleDetails(
        "rate_limit", timedelta(milliseconds=1), 5, False, error.provider_payload
    )
    assert error.provider_payload is not None and "rate_limit_exceeded" in str(error.provider_payload)
    assert error.prompt_name == "greeting" and isinstance(error, PromptEvaluationError)
    assert isinstance(error.cause, llmplex.LLMRateLimitError)


def test_retry_after_is_a_timedelta_and_sets_the_minimum_wait(fault_server: FaultServer) -> None:
    """Seed 002 § Backoff Strategy (Retry-After respect) / § ThrottleError (retry_after: timedelta)."""
    log = SleepLog()
    fault_server.enqueue(Fault.rate_limit(retry_after=2), Fault.rate_limit(retry_after=2))
    adapter = OpenAIAdapter(
        model="gpt-test",
        client=client_on(fault_server, log.clock()),
        throttle_policy=new_throttle_policy(max_attempts=2),
    )
    with pytest.raises(ThrottleError) as caught:
        adapter.evaluate(greeting(), session=Session())
    assert caught.value.retry_after == timedelta(seconds=2)
    assert log.sleeps == [2.0]  # the jittered backoff (at most 0.5 s) is raised to Retry-After


def test_backoff_is_exponential_with_jitter_and_capped(fault_server: FaultServer) -> None:
    """Seed 002 § Backoff Strategy: delays double from base, capped at max, with full jitter (never above the cap)."""
    log = SleepLog()
    fault_server.enqueue(*[Fault.rate_limit()] * 5)
    policy = new_throttle_policy(max_attempts=5, base_delay=timedelta(seconds=1), max_delay=timedelta(seconds=3))
    adapter = OpenAIAdapter(model="gpt-test", client=client_on(fault_server, log.clock()), throttle_policy=policy)
    with pytest.raises(ThrottleError):
        adapter.evaluate(greeting(), session=Session())
    assert len(log.sleeps) == 4
    for wait, cap in zip(log.sleeps, [1, 2, 3, 3], strict=True):
        assert 0 <= wait <= cap


def test_retries_stop_at_the_total_delay_budget(fault_server: FaultServer) -> None:
    """Seed 002 § Throttle Policy (max_total_delay: total time budget)."""
    log = SleepLog()
    fault_server.enqueue(*[Fault.rate_limit(retry_after=4)] * 5)
    policy = new_throttle_policy(max_total_delay=timedelta(seconds=10))
    adapter = OpenAIAdapter(model="gpt-test", client=client_on(fault_server, log.clock()), throttle_policy=policy)
    with pytest.raises(ThrottleError) as caught:
        adapter.evaluate(greeting(), session=Session())
    assert log.sleeps == [4.0, 4.0]
    assert caught.value.attempts == 3 and not caught.value.retry_safe


def test_retries_abort_when_the_deadline_leaves_too_little_time(fault_server: FaultServer) -> None:
    """Seed 002 § Backoff Strategy (Deadline awareness): a wait that would pass the deadline is not started."""
    log = SleepLog()  # the waits begun, in place of a wall-clock bound that a loaded machine's first use outran
    adapter = OpenAIAdapter(model="gpt-test", client=client_on(fault_server, log.clock()), throttle_policy=FAST)
    # warmed up (the plugin and its SDK imported): cold, on a loaded machine, the import outlasted the deadline
    adapter.evaluate(greeting(), session=Session())
    fault_server.reset()
    fault_server.enqueue(Fault.rate_limit(retry_after=30), Fault.ok("never"))
    deadline = wi.Deadline(expires_at=datetime.now(UTC) + timedelta(seconds=5))
    with pytest.raises(ThrottleError) as caught:
        adapter.evaluate(greeting(), session=Session(), deadline=deadline)
    assert log.sleeps == []  # neither the 30 s asked for nor the 5 s left: no wait at all
    assert fault_server.request_count == 1 and not caught.value.retry_safe


def test_requests_are_not_altered_between_attempts(fault_server: FaultServer) -> None:
    """Seed 002 § Backoff Strategy (No pre-send shaping): every retry sends the same payload."""
    fault_server.enqueue(Fault.rate_limit(), Fault.server_error(503), Fault.ok())
    openai_adapter(fault_server, model_config=OpenAIModelConfig(temperature=0.2)).evaluate(
        greeting(), session=Session()
    )
    bodies = [request.body for request in fault_server.requests]
    assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried_then_raise_throttle_error(fault_server: FaultServer, status: int) -> None:
    """Seed 002 § Signal Classification (server error 500-503: retry with backoff)."""
    fault_server.enqueue(Fault.server_error(status), Fault.ok("ok"))
    assert openai_adapter(fault_server).evaluate(greeting(), session=Session()).text == "ok"
    fault_server.enqueue(*[Fault.server_error(status)] * 5)
    with pytest.raises(ThrottleError) as caught:
        openai_adapter(fault_server).evaluate(greeting(), session=Session())
    assert (caught.value.kind, caught.value.attempts, caught.value.retry_safe) == ("unknown", 5, False)


def test_quota_exhaustion_is_a_throttle_error_without_retrying(fault_server: FaultServer) -> None:
    """Seed 002 § Signal Classification (quota exhaustion): kind quota_exhausted; llmplex does not retry it."""
    fault_server.enqueue(Fault.quota(), Fault.ok("never"))
    with pytest.raises(ThrottleError) as caught:
        openai_adapter(fault_server).evaluate(greeting(), session=Session())
    assert (caught.value.kind, caught.value.attempts, caught.value.retry_safe) == ("quota_exhausted", 1, False)
    assert fault_server.request_count == 1


def test_timeouts_are_retried_then_raise_a_timeout_throttle_error(fault_server: FaultServer) -> None:
    """Seed 002 § Signal Classification (timeout: retry if deadline permits); client_config timeout per request."""
    fault_server.enqueue(Fault.hang(3), Fault.hang(3))
    config = OpenAIClientConfig(api_key=KEY, base_url=fault_server.url, timeout=0.3)
    policy = new_throttle_policy(max_attempts=2, base_delay=timedelta(milliseconds=1))
    with pytest.raises(ThrottleError) as caught:
        openai_adapter(fault_server, client_config=config, throttle_policy=policy).evaluate(
            greeting(), session=Session()
        )
    assert (caught.value.kind, caught.value.attempts) == ("timeout", 2)
    # The client may give up before a loaded server's handler thread has read the last request.
    assert fault_server.wait_for_requests(2, timeout=10)
    assert fault_server.request_count == 2


def test_a_bad_request_is_a_request_phase_error_and_not_retried(fault_server: FaultServer) -> None:
    """Seed 003 § Strict contracts / seed 002 § Inner Loop (failures wrap in PromptEvaluationError phase request)."""
    fault_server.enqueue(Fault.json(400, fx.context_length_exceeded_error()))
    with pytest.raises(PromptEvaluationError) as caught:
        openai_adapter(fault_server).evaluate(greeting(), session=Session())
    assert type(caught.value) is PromptEvaluationError and caught.value.phase == "request"
    assert caught.value.provider_payload is not None and fault_server.request_count == 1


def test_an_unreadable_answer_is_a_response_phase_error(fault_server: FaultServer) -> None:
    """Seed 003 § LiteLLM caveats / § Known limitations: mismatched response shapes raise response-phase errors."""
    fault_server.enqueue(*[Fault.malformed_json()] * 5)
    with pytest.raises(PromptEvaluationError) as caught:
        openai_adapter(fault_server).evaluate(greeting(), session=Session())
    assert caught.value.phase == "response" and not isinstance(caught.value, ThrottleError)


def test_the_retried_failures_are_logged(fault_server: FaultServer, caplog: pytest.LogCaptureFixture) -> None:
    """Seed 002 § Telemetry (structured logs prompt.call.start, prompt.throttled on retry, prompt.error)."""
    fault_server.enqueue(Fault.rate_limit(), Fault.json(400, fx.context_length_exceeded_error()))
    caplog.set_level("DEBUG", logger="llmplex")
    with pytest.raises(PromptEvaluationError):
        openai_adapter(fault_server).evaluate(greeting(), session=Session())
    messages = [record.getMessage() for record in caplog.records if record.name == "llmplex"]
    assert {"prompt.call.start", "prompt.throttled", "prompt.error"} <= set(messages)
    assert KEY not in caplog.text
