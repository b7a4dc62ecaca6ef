"""Issue 13, part A: the defects of llmplex itself that the seeds exposed, fixed in core and in every plugin.

Each test names the fix it covers; the changelog (docs/changelog.md) lists the same fixes.
"""

from __future__ import annotations

import pytest

import llmplex
from llmplex.cli.exit_codes import exit_code_for
from llmplex.providers.mock import MockBackend
from llmplex.testing.replies import ERROR_KINDS
from tests.compat.conftest import FAULT_KEY, fault_config
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

# -- LLMDeadlineExceededError is an LLMTimeoutError ---------------------------------------------------------------


def test_fix_deadline_exceeded_is_caught_as_a_timeout(client: llmplex.Client, mock_backend: MockBackend) -> None:
    """An expired deadline is a timeout for code that catches LLMTimeoutError, and it is not retried."""
    # Warmed up: a first call loads the observers and the provider, which a loaded machine took longer than the
    # deadline for (the call then ended before it reached the backend, with nothing to retry).
    client.complete("mock:echo", "warm-up")
    mock_backend.push("late", delay=5)
    # made a moment before the call makes its own deadline (``tests.support.late``: the time a busy machine keeps
    # the caller waiting for a CPU is not counted)
    late = Late.after(1.0)
    with pytest.raises(llmplex.LLMTimeoutError) as caught:
        client.complete("mock:echo", "hi", timeout=1.0)
    seconds = late.seconds()
    assert seconds < 1.0, late.describe(seconds)
    assert type(caught.value) is llmplex.LLMDeadlineExceededError
    assert caught.value.retryable is False
    assert len(mock_backend.calls) == 1 + 1  # the warm-up's and this call's single attempt


def test_fix_a_plain_timeout_is_still_retried(client: llmplex.Client, mock_backend: MockBackend) -> None:
    """The subclassing changes nothing for ordinary timeouts: they stay retryable."""
    mock_backend.push_error(TimeoutError("slow"))
    answer = client.complete("mock:echo", "hello there", throttle={"base_delay": 0})
    assert answer.text == "hello there" and answer.attempts == 2


# -- LLMQuotaExhaustedError is an LLMRateLimitError that is never retried ---------------------------------------


def test_fix_quota_exhausted_is_a_rate_limit_error_sent_once(
    fault_client: llmplex.Client, fault_server: FaultServer
) -> None:
    """Seed 000: every 429 is a rate-limit error; quota exhaustion still is not retried by core."""
    fault_server.enqueue(Fault.quota())
    with pytest.raises(llmplex.LLMRateLimitError) as caught:
        fault_client.complete("fault:gpt-4o-mini", "hi")
    assert type(caught.value) is llmplex.LLMQuotaExhaustedError
    assert (caught.value.status_code, caught.value.retryable, caught.value.attempts) == (429, False, 1)
    assert fault_server.request_count == 1


def test_fix_an_ordinary_429_is_still_retried(fault_client: llmplex.Client, fault_server: FaultServer) -> None:
    """A rate limit that is not quota exhaustion is retried as before."""
    fault_server.enqueue(Fault.rate_limit(), Fault.ok("after the wait"))
    assert fault_client.complete("fault:gpt-4o-mini", "hi").text == "after the wait"
    assert fault_server.request_count == 2


# -- LLMAuthenticationError: 401/403, a configuration error and an API error -------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_fix_rejected_credentials_raise_authentication_error(
    fault_client: llmplex.Client, fault_server: FaultServer, status: int
) -> None:
    """401/403 become LLMAuthenticationError: catchable as LLMConfigurationError and LLMAPIError, with status."""
    body = fx.error_body(f"Incorrect API key provided: {FAULT_KEY}.", "invalid_request_error", code="invalid_api_key")
    fault_server.enqueue(Fault.json(status, body))
    with pytest.raises(llmplex.LLMAuthenticationError) as caught:
        fault_client.complete("fault:gpt-4o-mini", "hi")
    error = caught.value
    assert isinstance(error, llmplex.LLMConfigurationError) and isinstance(error, llmplex.LLMAPIError)
    assert (error.status_code, error.retryable, error.attempts) == (status, False, 1)
    assert "api_key" in str(error), "the message says what to fix"
    assert FAULT_KEY not in str(error) and FAULT_KEY not in repr(error) and FAULT_KEY not in repr(error.response_body)
    assert fault_server.request_count == 1


def test_fix_the_conformance_kit_requires_authentication_error_of_every_plugin() -> None:
    """Every plugin passes the kit, and the kit now asks for LLMAuthenticationError (with a status) on a 401."""
    expected = ERROR_KINDS["authentication"]
    assert expected.classes == (llmplex.LLMAuthenticationError,)
    assert expected.has_status and not expected.retryable


# -- the CLI's exit status follows the classes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (llmplex.LLMAuthenticationError("x", status_code=401), 3),
        (llmplex.LLMQuotaExhaustedError("x", status_code=429), 5),
        (llmplex.LLMRateLimitError("x", status_code=429), 4),
        (llmplex.LLMDeadlineExceededError("x"), 9),
        (llmplex.LLMTimeoutError("x"), 9),
    ],
)
def test_fix_exit_status_of_the_reparented_classes(error: llmplex.LLMError, status: int) -> None:
    """A subclass keeps its own exit status (quota 5, not rate limit 4); authentication is configuration (3)."""
    assert exit_code_for(error) == status


# -- a bare prefix selects the provider's default model; GEMINI_MODEL chooses gemini's ---------------------------


@pytest.fixture
def gemini_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_0123456789abcdefghij")
    monkeypatch.delenv("GEMINI_MODEL", raising=False)
    return monkeypatch


def test_fix_bare_gemini_prefix_is_the_documented_default_model(gemini_env: pytest.MonkeyPatch) -> None:
    """``gemini:`` alone routes to gemini-2.5-flash, the default docs/providers/gemini.md names."""
    assert llmplex.Client().route("gemini:").spec == "gemini:gemini-2.5-flash"


def test_fix_gemini_model_environment_variable_chooses_the_default(gemini_env: pytest.MonkeyPatch) -> None:
    """``GEMINI_MODEL`` (seed 001's override) is the model of a bare ``gemini:``; a named model still wins."""
    gemini_env.setenv("GEMINI_MODEL", "gemini-2.0-flash")
    client = llmplex.Client()
    assert client.route("gemini:").spec == "gemini:gemini-2.0-flash"
    assert client.route("gemini:gemini-2.5-pro").spec == "gemini:gemini-2.5-pro"


def test_fix_gemini_default_model_reaches_the_wire(gemini_env: pytest.MonkeyPatch) -> None:
    """The chosen default is the model the request is formatted for (not only the route)."""
    gemini_env.setenv("GEMINI_MODEL", "gemini-2.0-flash")
    client = llmplex.Client()
    route = client.route("gemini:")
    request = llmplex.Request(model=route.model, messages=(llmplex.Message.user("hi"),))
    payload = route.provider.hooks.format(request=request, settings=route.provider.settings)
    assert payload["model"] == "gemini-2.0-flash"


def test_fix_every_bare_prefix_has_a_default_model(client: llmplex.Client) -> None:
    """The rule is core's: ``mock:`` alone is the mock's declared default (``echo``)."""
    assert client.complete("mock:", "just the prefix").model == "echo"


# -- tools as provider declarations: llmplex.tool_declarations ----------------------------------------------------

ADD_TASK = {
    "name": "add_task",
    "description": "Create a new task.",
    "parameters": {
        "type": "object",
        "properties": {"description": {"type": "string", "description": "Task description"}},
        "required": ["description"],
    },
}


def _wire_tools(payload: dict[str, object], prefix: str) -> object:
    if prefix == "gemini":
        return payload["config"]["tools"][0]["function_declarations"]  # type: ignore[index]
    return payload["tools"]


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-4f9a8b7c6d5e4f3a2b1c")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-4f9a8b7c6d5e4f3a")
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_0123456789abcdefghij")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return llmplex.Client(providers={"local": {"plugin": "openai", "base_url": "http://127.0.0.1:9/v1"}})


@pytest.mark.parametrize("prefix", ["openai", "local", "anthropic", "gemini", "litellm", "llamacpp", "mock"])
def test_fix_tool_declarations_are_what_the_provider_sends(keyed: llmplex.Client, prefix: str) -> None:
    """``tool_declarations(tools, provider)`` gives exactly the per-tool shape the plugin puts on the wire."""
    declared = keyed.tool_declarations([ADD_TASK], prefix)
    provider = keyed.router.instance(prefix)
    request = llmplex.Request(
        model="m", messages=(llmplex.Message.user("hi"),), tools=(llmplex.Tool.model_validate(ADD_TASK),)
    )
    payload = provider.hooks.format(request=request, settings=provider.settings)
    assert declared == _wire_tools(payload, prefix)
    assert "add_task" in repr(declared)


def test_fix_tool_declarations_shapes_differ_per_provider(keyed: llmplex.Client) -> None:
    """The documented shapes: Responses flat, Chat Completions nested, Anthropic input_schema, Gemini declarations."""
    (responses,) = keyed.tool_declarations([ADD_TASK], "openai")
    (chat,) = keyed.tool_declarations([ADD_TASK], "local:any-model")
    (anthropic,) = keyed.tool_declarations([ADD_TASK], "anthropic")
    (gemini,) = keyed.tool_declarations([ADD_TASK], "gemini")
    assert responses["type"] == "function" and responses["name"] == "add_task"
    assert chat == {"type": "function", "function": {**ADD_TASK}}
    assert anthropic["input_schema"] == ADD_TASK["parameters"] and anthropic["name"] == "add_task"
    assert gemini == {
        "name": "add_task",
        "description": ADD_TASK["description"],
        "parameters_json_schema": ADD_TASK["parameters"],
    }


def test_fix_tool_declarations_take_functions_and_use_the_default_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The module-level function works on the default client and takes typed functions like ``complete``."""

    def complete_task(task_id: str) -> str:
        """Mark a task as completed."""
        return task_id

    (declared,) = llmplex.tool_declarations([complete_task], provider="mock")
    assert declared["name"] == "complete_task"
    assert declared["parameters"]["required"] == ["task_id"]


@pytest.mark.parametrize(
    ("provider", "problem"),
    [("claude-code", "does not support tools"), ("nowhere", "unknown provider"), ("", "prefix")],
)
def test_fix_tool_declarations_for_a_provider_without_them_is_a_typed_error(
    client: llmplex.Client, provider: str, problem: str
) -> None:
    """A provider without tools, an unknown one or an empty name: LLMConfigurationError saying which."""
    with pytest.raises(llmplex.LLMConfigurationError, match=problem):
        client.tool_declarations([ADD_TASK], provider)


def test_fix_tool_declarations_reject_an_invalid_tool(client: llmplex.Client) -> None:
    """An invalid tool is refused as in ``complete``: typed, naming the tool."""
    with pytest.raises(llmplex.LLMConfigurationError, match="tools\\[0\\]"):
        client.tool_declarations([{"name": "bad name!", "parameters": {}}], "mock")


# -- the openai plugin speaks the Responses API on any base_url when told to --------------------------------------


def test_fix_responses_api_on_a_non_openai_url_keeps_chains(fault_server: FaultServer) -> None:
    """``api = "responses"`` on another URL: /v1/responses, and previous_response_id continues the chain."""
    client = llmplex.Client(fault_config(fault_server, api="responses"))
    first = client.complete("fault:gpt-4o-mini", "hi")
    second = client.complete("fault:gpt-4o-mini", "and again", previous_response_id=first.response_id)
    assert second.text
    assert [r.path for r in fault_server.requests] == ["/v1/responses", "/v1/responses"]
    assert fault_server.requests[1].body["previous_response_id"] == first.response_id


def test_fix_openai_prefix_from_the_environment_alone_speaks_responses(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_API_KEY + OPENAI_BASE_URL (what ``AsyncOpenAI()`` reads) plus LLMPLEX_PROVIDERS__OPENAI__API=responses."""
    monkeypatch.setenv("OPENAI_API_KEY", FAULT_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fault_server.url)
    monkeypatch.setenv("LLMPLEX_PROVIDERS__OPENAI__API", "responses")
    client = llmplex.Client()
    assert client.route("openai:gpt-4o-mini").provider.capabilities.response_chains
    first = client.complete("openai:gpt-4o-mini", "hi")
    client.complete("openai:gpt-4o-mini", "more", previous_response_id=first.response_id)
    assert [r.path for r in fault_server.requests] == ["/v1/responses", "/v1/responses"]
    assert fault_server.requests[0].headers["authorization"] == f"Bearer {FAULT_KEY}"
