"""The litellm plugin through the public API, over LiteLLM's OpenAI-compatible path."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from pydantic import BaseModel

import llmplex
from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMBudgetExceededError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMDeadlineExceededError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
    LLMTimeoutError,
)
from tests.contract import fixtures_openai as fx
from tests.contract.openapi import validate_openai
from tests.plugins.litellm.conftest import API_KEY, MODEL
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late


class City(BaseModel):
    name: str
    country: str


WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}


def sent(server: FaultServer) -> dict[str, object]:
    body = server.requests[-1].body
    assert isinstance(body, dict)
    return body


# -- lazy import -------------------------------------------------------------------------


def test_litellm_is_imported_only_by_the_first_request() -> None:
    script = textwrap.dedent(
        """
        import sys, llmplex
        assert "litellm" not in sys.modules, "import llmplex imported litellm"
        client = llmplex.Client()
        assert client.complete("mock:echo", "hi").text == "hi"
        route = client.route("litellm:openai/gemma")
        assert route.provider.settings.problems() == []
        assert "llmplex_litellm.plugin" in sys.modules and "litellm" not in sys.modules, "resolving imported litellm"
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "ok", done.stderr


def test_providers_command_lists_litellm_without_importing_it() -> None:
    script = textwrap.dedent(
        """
        import sys
        from click.testing import CliRunner
        from llmplex.cli.main import cli
        out = CliRunner().invoke(cli, ["providers"]).stdout
        line = next(l for l in out.splitlines() if "│ litellm " in l)
        assert "llmplex-litellm" in line and "yes" in line, line
        assert "litellm" not in sys.modules
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "ok", done.stderr


# -- answers -------------------------------------------------------------------------------


def test_complete_sends_openai_chat_body_and_parses_answer(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.ok("Bonjour tout le monde", usage=fx.TokenUsage(12, 4)))
    response = llm.complete(MODEL, "Say hello", system="Be French", temperature=0.2, max_tokens=20, stop=["\n"])
    assert response.text == "Bonjour tout le monde"
    assert (response.provider, response.model, response.finish_reason) == ("litellm", "gemma", "stop")
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (12, 4, 16)
    assert response.response_id == fx.CHAT_ID
    body = sent(server)
    assert body["model"] == "gemma"
    assert body["messages"] == [{"role": "system", "content": "Be French"}, {"role": "user", "content": "Say hello"}]
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (0.2, 20, ["\n"])
    assert server.requests[-1].headers["authorization"] == f"Bearer {API_KEY}"
    validate_openai("CreateChatCompletionRequest", body)


async def test_acomplete(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.ok("async answer"))
    response = await llm.acomplete(MODEL, "hi")
    assert response.text == "async answer"
    assert server.request_count == 1


def test_tool_calls_round_trip(llm: llmplex.Client, server: FaultServer) -> None:
    call = fx.FunctionCall(arguments='{"location":"Paris"}')
    server.enqueue(Fault.json(200, fx.chat_completion_tool_calls(call)))
    response = llm.complete(MODEL, "Weather in Paris?", tools=[WEATHER], tool_choice="get_weather")
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.parsed_arguments()) for c in response.tool_calls] == [
        (fx.CALL_ID, "get_weather", {"location": "Paris"})
    ]
    body = sent(server)
    assert body["tools"] == [{"type": "function", "function": WEATHER}]
    assert not any(key.startswith("_") for key in body)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    validate_openai("CreateChatCompletionRequest", body)

    server.enqueue(Fault.ok("It is sunny."))
    follow_up = [
        llmplex.Message.user("Weather in Paris?"),
        response.message(),
        llmplex.Message.tool(fx.CALL_ID, "sunny", name="get_weather"),
    ]
    assert llm.complete(MODEL, follow_up, tools=[WEATHER]).text == "It is sunny."
    messages = sent(server)["messages"]
    assert isinstance(messages, list)
    assert messages[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"location":"Paris"}'}
    assert messages[2] == {"role": "tool", "content": "sunny", "tool_call_id": fx.CALL_ID, "name": "get_weather"}


def test_structured_output_sets_response_format_and_parses_the_text(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.json(200, fx.chat_completion('{"name": "Paris", "country": "France"}')))
    response = llm.complete(MODEL, "Capital of France?", output=City)
    assert response.output == City(name="Paris", country="France")
    response_format = sent(server)["response_format"]
    assert isinstance(response_format, dict)
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "City"
    assert response_format["json_schema"]["schema"]["required"] == ["name", "country"]


def test_a_refusal_is_read_from_where_litellm_puts_it(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.json(200, fx.chat_completion_refusal("I can't help with that.")))
    response = llm.complete(MODEL, "something forbidden")
    assert (response.refusal, response.finish_reason) == ("I can't help with that.", "refusal")


def test_stream_yields_text_then_the_assembled_response(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.ok("one two three", usage=fx.TokenUsage(5, 3)))
    events = list(llm.stream(MODEL, "count"))
    assert "".join(e.text for e in events if e.type == "text") == "one two three"
    final = events[-1].response
    assert final is not None
    assert (final.text, final.finish_reason, final.usage.total_tokens) == ("one two three", "stop", 8)
    assert sent(server)["stream_options"] == {"include_usage": True}


async def test_astream(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.ok("async stream", usage=fx.TokenUsage(2, 2)))
    events = [e async for e in llm.astream(MODEL, "go")]
    assert "".join(e.text for e in events if e.type == "text") == "async stream"
    assert events[-1].response is not None and events[-1].response.usage.output_tokens == 2


def test_streamed_tool_call_chunks_become_tool_call_events() -> None:
    import litellm
    from llmplex_litellm.parse import parse_chunk

    call = fx.FunctionCall(arguments='{"location":"Paris"}')
    state = llmplex.types.StreamState(llmplex.types.Request(model="m", messages=(llmplex.Message.user("x"),)))
    chunks = [litellm.ModelResponseStream(**chunk) for chunk in fx.chat_stream_tool_call(call)]
    events = [event for chunk in chunks for event in parse_chunk(chunk, state)]
    pieces = [e for e in events if e.type == "tool_call"]
    assert pieces[0].tool_call_id == fx.CALL_ID and pieces[0].tool_name == "get_weather"
    assert "".join(p.arguments_delta for p in pieces) == '{"location":"Paris"}'
    assert [e.finish_reason for e in events if e.type == "finish"] == ["tool_calls"]
    assert [e.usage.total_tokens for e in events if e.type == "usage" and e.usage] == [29]


# -- no retries inside LiteLLM, errors in the taxonomy -----------------------------------


def test_rate_limit_is_not_retried_by_litellm_and_keeps_retry_after(llm: llmplex.Client, server: FaultServer) -> None:
    server.enqueue(Fault.rate_limit(retry_after=7))
    with pytest.raises(LLMRateLimitError) as caught:
        llm.complete(MODEL, "hi")
    assert server.request_count == 1
    assert caught.value.status_code == 429 and caught.value.retryable
    assert caught.value.retry_after == 7


def test_core_retries_a_server_error(server: FaultServer) -> None:
    server.enqueue(Fault.server_error(503), Fault.ok("recovered"))
    llm = llmplex.Client(
        providers={"litellm": {"api_base": server.url, "api_key": API_KEY}},
        throttle={"max_attempts": 2, "base_delay": 0.01, "max_delay": 0.01},
    )
    response = llm.complete(MODEL, "hi")
    assert (response.text, response.attempts, server.request_count) == ("recovered", 2, 2)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault.json(400, fx.context_length_exceeded_error()), LLMBadRequestError),
        (Fault.quota(), LLMQuotaExhaustedError),
        (Fault.server_error(500), LLMServerError),
        (
            Fault.json(404, fx.error_body("The model `gemma` does not exist", "invalid_request_error")),
            LLMBadRequestError,
        ),
        (
            Fault.json(401, fx.error_body(f"Incorrect API key provided: {API_KEY}", "invalid_request_error")),
            LLMAuthenticationError,
        ),
    ],
)
def test_http_errors_map_to_the_taxonomy(
    llm: llmplex.Client, server: FaultServer, fault: Fault, expected: type[Exception]
) -> None:
    server.enqueue(fault)
    with pytest.raises(expected) as caught:
        llm.complete(MODEL, "hi")
    assert type(caught.value) is expected
    assert API_KEY not in str(caught.value) and API_KEY not in repr(caught.value)
    assert server.request_count == 1


def test_the_deadline_becomes_litellms_timeout(llm: llmplex.Client, server: FaultServer) -> None:
    llm.complete(MODEL, "hi")  # warmed up: cold, the deadline passes while LiteLLM is imported, before any request
    server.enqueue(Fault.hang(5))
    # made a moment before the call makes its own deadline of 0.5 s (``tests.support.late``: the time a busy
    # machine keeps the caller waiting for a CPU is not counted)
    late = Late.after(0.5)
    with pytest.raises(LLMDeadlineExceededError):
        llm.complete(MODEL, "hi", timeout=0.5)
    seconds = late.seconds()
    assert seconds < 2.5, late.describe(seconds)


def test_connection_refused() -> None:
    llm = llmplex.Client(
        providers={"litellm": {"api_base": "http://127.0.0.1:9/v1", "api_key": API_KEY}}, throttle={"max_attempts": 1}
    )
    with pytest.raises(LLMConnectionError):
        llm.complete(MODEL, "hi")


def test_missing_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch, server: FaultServer) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = llmplex.Client(providers={"litellm": {"api_base": server.url}}, throttle={"max_attempts": 1})
    with pytest.raises(LLMConfigurationError, match="api_key"):
        llm.complete(MODEL, "hi")
    assert server.request_count == 0


def test_retry_and_fallback_options_are_refused(llm: llmplex.Client, server: FaultServer) -> None:
    with pytest.raises(LLMConfigurationError, match="fallbacks"):
        llm.complete(MODEL, "hi", provider_options={"fallbacks": ["openai/gpt-4o"]})
    with pytest.raises(LLMConfigurationError, match="num_retries"):
        llmplex.Client(providers={"litellm": {"completion_kwargs": {"num_retries": 3}}}).complete(MODEL, "hi")
    assert server.request_count == 0


def test_provider_options_reach_litellm(llm: llmplex.Client, server: FaultServer) -> None:
    response = llm.complete(MODEL, "hi", provider_options={"mock_response": "mocked by litellm"})
    assert response.text == "mocked by litellm"
    assert server.request_count == 0


# -- LiteLLM's own exception classes (mock_response raises them inside litellm.completion) --


def _litellm_errors() -> list[tuple[str, object, type[Exception]]]:
    import litellm

    where = {"llm_provider": "openai", "model": "gemma"}
    return [
        ("rate limit", "litellm.RateLimitError", LLMRateLimitError),
        ("context window", "litellm.ContextWindowExceededError", LLMBadRequestError),
        ("internal", "litellm.InternalServerError", LLMServerError),
        ("policy", litellm.ContentPolicyViolationError(message="flagged", **where), LLMRefusalError),
        ("unavailable", litellm.ServiceUnavailableError(message="down", **where), LLMServerError),
        ("timeout", litellm.Timeout(message="slow", **where), LLMTimeoutError),
        ("connection", litellm.APIConnectionError(message="refused", **where), LLMConnectionError),
        ("auth", litellm.AuthenticationError(message="bad key", **where), LLMAuthenticationError),
        ("not found", litellm.NotFoundError(message="no such model", **where), LLMBadRequestError),
        ("bad request", litellm.BadRequestError(message="bad", **where), LLMBadRequestError),
        ("unknown provider", litellm.LiteLLMUnknownProvider(model="nope/x"), LLMConfigurationError),
        ("mock 503", litellm.MockException(status_code=503, message="busy", **where), LLMServerError),
        ("mock 429", litellm.MockException(status_code=429, message="slow down", **where), LLMRateLimitError),
    ]


def test_litellm_exceptions_map_to_the_taxonomy(llm: llmplex.Client, server: FaultServer) -> None:
    for label, mock_response, expected in _litellm_errors():
        with pytest.raises(expected) as caught:
            llm.complete(MODEL, "hi", provider_options={"mock_response": mock_response})
        assert type(caught.value) is expected, label
        assert caught.value.provider == "litellm", label
    assert server.request_count == 0


def test_budget_exceeded_is_a_budget_error() -> None:
    import litellm
    from llmplex_litellm.errors import classify_error

    error = classify_error(litellm.BudgetExceededError(current_cost=2.5, max_budget=2.0))
    assert isinstance(error, LLMBudgetExceededError) and not error.retryable
    assert classify_error(ValueError("not litellm's")) is None
    assert classify_error(LLMConfigurationError("already typed")) is None, "core's fallback passes these through"


# -- one environment with llmplex-openai ---------------------------------------------------


def _unmet(distribution_name: str) -> list[str]:
    from importlib.metadata import PackageNotFoundError, distribution, version

    from packaging.requirements import Requirement

    try:
        requirements = distribution(distribution_name).requires or []
    except PackageNotFoundError:
        pytest.fail(f"{distribution_name} is not installed: pip install -e plugins/{distribution_name[8:]}")
    unmet = []
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            unmet.append(f"{requirement} (not installed)")
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            unmet.append(f"{requirement} (installed {installed})")
    return unmet


def test_installs_and_works_alongside_llmplex_openai(server: FaultServer) -> None:
    assert _unmet("llmplex-openai") == [] and _unmet("llmplex-litellm") == []
    llm = llmplex.Client(
        providers={
            "litellm": {"api_base": server.url, "api_key": API_KEY},
            "local": {"plugin": "openai", "base_url": server.url, "api_key": API_KEY, "api": "chat"},
        },
        throttle={"max_attempts": 1},
    )
    server.enqueue(Fault.ok("via openai"), Fault.ok("via litellm"))
    assert llm.complete("local:gemma", "hi").text == "via openai"
    assert llm.complete(MODEL, "hi").text == "via litellm"
