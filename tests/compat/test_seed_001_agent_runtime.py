"""Seed 001 (agent-runtime, "LLM Adapter Interface Contract") on llmplex.compat.agent_runtime.

Every documented example and behaviour of the seed is a test; each docstring names the seed section.
Gemini is faked at the HTTP layer under the real google-genai SDK (payloads shaped as Google documents
them); the fault-injecting OpenAI-wire server stands for another provider (a config instance ``fault:``);
the mock provider and the fake ``claude`` CLI complete the set.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from llmplex.compat import agent_runtime as ar
from tests.compat.conftest import FAULT_KEY
from tests.compat.task_tools import KEY, TOOL_DECLARATIONS
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.claude_code.conftest import FakeCLI
from tests.plugins.gemini.wire import error_body, function_call_part, response, text_part, usage
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

__all__ = ["fake_http"]

RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"

NAMES = [t["name"] for t in TOOL_DECLARATIONS]


@pytest.fixture(autouse=True)
def registry(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The application fills the module's registry (the seed's TOOL_DECLARATIONS pattern); fresh per test."""
    filled: list[dict[str, Any]] = []
    monkeypatch.setattr(ar, "TOOL_DECLARATIONS", filled)
    filled.extend(TOOL_DECLARATIONS)
    monkeypatch.setenv("LLMPLEX_THROTTLE__BASE_DELAY", "0")
    monkeypatch.setenv("LLMPLEX_THROTTLE__MAX_DELAY", "0")
    monkeypatch.delenv("GEMINI_MODEL", raising=False)
    return filled


@pytest.fixture
def gemini(fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> FakeHTTP:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    return fake_http


@pytest.fixture
def fault_toml(fault_server: FaultServer, isolated_config: Path) -> FaultServer:
    """./llmplex.toml declaring ``fault:``, the openai plugin on the fault server."""
    (isolated_config / "llmplex.toml").write_text(
        f'[providers.fault]\nplugin = "openai"\nbase_url = "{fault_server.url}"\n'
        f'api_key = "{FAULT_KEY}"\napi = "chat"\n',
        encoding="utf-8",
    )
    return fault_server


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def user(text: str) -> ar.LLMMessage:
    return ar.LLMMessage(role="user", content=text)


def gemini_body(sent: FakeHTTP) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(sent.last().body)
    return body


# -- "Overview": the interface supports provider swaps -------------------------------------------------------------


async def agent_turn(adapter: ar.LLMAdapter, text: str) -> ar.LLMResponse:
    """Agent-runtime code as the seed's users write it: typed against the protocol only."""
    tools = adapter.get_tool_declarations(["add_task", "list_tasks"])
    return await adapter.generate([ar.LLMMessage(role="user", content=text)], tools)


def test_overview_the_interface_supports_provider_swaps(gemini: FakeHTTP, fault_toml: FaultServer) -> None:
    """Overview: the same runtime code runs on Gemini and, swapped, on another provider and the mock."""
    gemini.reply(json_body=response([text_part("Gemini here.")], usage_metadata=usage(9, 3)))
    fault_toml.enqueue(Fault.ok("OpenAI-compatible here."))
    answers = [
        run(agent_turn(ar.GeminiAdapter(api_key=KEY), "hello")),
        run(agent_turn(ar.adapter_for("fault:gpt-4o-mini"), "hello")),
        run(agent_turn(ar.adapter_for("mock:echo"), "hello")),
    ]
    assert [a.content for a in answers] == ["Gemini here.", "OpenAI-compatible here.", "hello"]
    assert all(a.finish_reason == "stop" for a in answers)


# -- "LLMAdapter Protocol" -----------------------------------------------------------------------------------------


def test_protocol_generate_signature_and_defaults() -> None:
    """LLMAdapter Protocol: ``generate(messages, tools, temperature=0.0, max_tokens=1024)`` is async."""
    for cls in (ar.LLMAdapter, ar.LLMPlexAdapter, ar.GeminiAdapter):
        parameters = inspect.signature(cls.generate).parameters
        assert list(parameters) == ["self", "messages", "tools", "temperature", "max_tokens"]
        assert (parameters["temperature"].default, parameters["max_tokens"].default) == (0.0, 1024)
        assert inspect.iscoroutinefunction(cls.generate)
        assert list(inspect.signature(cls.get_tool_declarations).parameters) == ["self", "tools"]


def test_protocol_every_adapter_meets_it() -> None:
    """LLMAdapter Protocol: GeminiAdapter and adapter_for(...) adapters are LLMAdapters; a plain object is not."""
    assert isinstance(ar.GeminiAdapter(KEY), ar.LLMAdapter)
    assert isinstance(ar.adapter_for("mock:echo"), ar.LLMAdapter)
    assert not isinstance(object(), ar.LLMAdapter)


def test_protocol_generate_sends_temperature_and_max_tokens(gemini: FakeHTTP) -> None:
    """LLMAdapter Protocol, Args: temperature (0.0 = deterministic) and max_tokens reach the provider."""
    gemini.reply(json_body=response([text_part("a")]))
    gemini.reply(json_body=response([text_part("b")]))
    adapter = ar.GeminiAdapter(KEY)
    run(adapter.generate([user("hi")], []))
    assert gemini_body(gemini)["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 1024}
    run(adapter.generate([user("hi")], [], temperature=0.9, max_tokens=64))
    assert gemini_body(gemini)["generationConfig"] == {"temperature": 0.9, "maxOutputTokens": 64}


def test_protocol_returns_content_and_or_function_calls(gemini: FakeHTTP) -> None:
    """LLMAdapter Protocol, Returns: LLMResponse with content and/or function calls (both at once too)."""
    parts = [text_part("Adding it."), function_call_part("add_task", {"description": "milk"})]
    gemini.reply(json_body=response(parts, usage_metadata=usage(20, 8)))
    adapter = ar.GeminiAdapter(KEY)
    answer = run(adapter.generate([user("remember milk")], adapter.get_tool_declarations(["add_task"])))
    assert answer.content == "Adding it."
    assert answer.function_calls == [ar.FunctionCall(name="add_task", arguments={"description": "milk"})]
    assert answer.finish_reason == "tool_calls"
    assert answer.usage == ar.TokenUsage(prompt_tokens=20, completion_tokens=8, total_tokens=28)


def test_protocol_get_tool_declarations_returns_tool_declarations() -> None:
    """LLMAdapter Protocol: ``get_tool_declarations(names)`` gives ToolDeclaration objects for those names."""
    declared = ar.adapter_for("mock:echo").get_tool_declarations(["complete_task"])
    assert declared == [ar.ToolDeclaration(**TOOL_DECLARATIONS[3])]


# -- "GeminiAdapter Implementation" --------------------------------------------------------------------------------


def test_gemini_adapter_init_api_key_and_default_model(gemini: FakeHTTP) -> None:
    """GeminiAdapter.__init__(api_key, model="gemini-2.0-flash"): the key authenticates, the model is addressed."""
    gemini.reply(json_body=response([text_part("ok")], model="gemini-2.0-flash"))
    run(ar.GeminiAdapter(api_key=KEY).generate([user("hi")], []))
    sent = gemini.last()
    assert sent.url.endswith("/models/gemini-2.0-flash:generateContent")
    assert sent.headers["x-goog-api-key"] == KEY
    gemini.reply(json_body=response([text_part("ok")], model="gemini-2.5-pro"))
    run(ar.GeminiAdapter(KEY, "gemini-2.5-pro").generate([user("hi")], []))
    assert gemini.last().url.endswith("/models/gemini-2.5-pro:generateContent")


def test_gemini_adapter_converts_messages_and_handles_function_calling(gemini: FakeHTTP) -> None:
    """GeminiAdapter.generate: converts the internal format (function call and function response turns)
    to Gemini's, declares the tools, and normalizes the answer."""
    gemini.reply(json_body=response([text_part("Done: milk is on your list.")]))
    messages = [
        user("remember milk"),
        ar.LLMMessage(role="assistant", function_call=ar.FunctionCall("add_task", {"description": "milk"})),
        ar.LLMMessage(role="function", function_response=ar.FunctionResponse("add_task", {"task_id": "t1"})),
    ]
    adapter = ar.GeminiAdapter(KEY)
    answer = run(adapter.generate(messages, adapter.get_tool_declarations(["add_task"])))
    assert (answer.content, answer.function_calls, answer.finish_reason) == (
        "Done: milk is on your list.",
        None,
        "stop",
    )
    body = gemini_body(gemini)
    contents = body["contents"]
    assert contents[0] == {"role": "user", "parts": [{"text": "remember milk"}]}
    assert contents[1]["role"] == "model"
    assert contents[1]["parts"][0]["functionCall"]["name"] == "add_task"
    assert contents[1]["parts"][0]["functionCall"]["args"] == {"description": "milk"}
    response_part = contents[2]["parts"][0]["functionResponse"]
    assert response_part["name"] == "add_task" and "t1" in json.dumps(response_part["response"])
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "add_task"
    assert TOOL_DECLARATIONS[0]["parameters"] in declaration.values()


# -- "Request/Response Contracts" ----------------------------------------------------------------------------------


def test_contracts_dataclass_fields_and_defaults() -> None:
    """Request/Response Contracts: LLMMessage, LLMResponse, FunctionCall, ToolDeclaration are dataclasses with
    the seed's fields and defaults."""

    def fields(cls: type) -> list[tuple[str, Any]]:
        return [(f.name, f.default) for f in dataclasses.fields(cls)]

    missing = dataclasses.MISSING
    assert fields(ar.LLMMessage) == [
        ("role", missing),
        ("content", None),
        ("function_call", None),
        ("function_response", None),
    ]
    assert fields(ar.LLMResponse) == [
        ("content", missing), ("function_calls", missing), ("finish_reason", missing), ("usage", None), ("error", None)
    ]  # fmt: skip
    assert [f.name for f in dataclasses.fields(ar.FunctionCall)] == ["name", "arguments"]
    assert fields(ar.ToolDeclaration) == [("name", missing), ("description", missing), ("parameters", missing)]


@pytest.mark.parametrize(
    ("scripted", "expected"),
    [
        ({"text": "fine"}, "stop"),
        ({"tool_calls": [{"name": "list_tasks", "arguments": "{}"}]}, "tool_calls"),
        ({"text": "cut", "finish_reason": "length"}, "max_tokens"),
        ({"text": "", "finish_reason": "content_filter"}, "error"),
    ],
)
def test_contracts_finish_reasons_use_the_seed_vocabulary(scripted: dict[str, Any], expected: str) -> None:
    """LLMResponse.finish_reason: only "stop", "tool_calls", "max_tokens" or "error" (then ``error`` says why)."""
    adapter = ar.adapter_for("mock:echo")
    adapter.client.provider_client("mock").push(**scripted)
    answer = run(adapter.generate([user("hi")], []))
    assert answer.finish_reason == expected
    assert (answer.error is not None) == (expected == "error")


def test_contracts_gemini_max_tokens_finish(gemini: FakeHTTP) -> None:
    """LLMResponse.finish_reason "max_tokens" from Gemini's own MAX_TOKENS."""
    gemini.reply(json_body=response([text_part("Once upon a")], finish_reason="MAX_TOKENS"))
    answer = run(ar.GeminiAdapter(KEY).generate([user("story")], [], max_tokens=3))
    assert (answer.content, answer.finish_reason) == ("Once upon a", "max_tokens")


def test_contracts_function_call_arguments_are_parsed() -> None:
    """FunctionCall.arguments is a dict of parsed arguments (not the JSON text the model sent)."""
    adapter = ar.adapter_for("mock:echo")
    adapter.client.provider_client("mock").push(
        tool_calls=[{"name": "update_task", "arguments": '{"task_id": "7", "description": "eggs"}'}]
    )
    answer = run(adapter.generate([user("rename 7")], adapter.get_tool_declarations(["update_task"])))
    assert answer.function_calls == [ar.FunctionCall("update_task", {"task_id": "7", "description": "eggs"})]


# -- "Error Handling Contract" -------------------------------------------------------------------------------------


def test_errors_format_is_a_dataclass_exception() -> None:
    """Error Response Format: ``LLMError(Exception)`` with ``message``, ``code``, ``retry_after: int | None``."""
    error = ar.LLMError("boom", "api_error")
    assert (error.message, error.code, error.retry_after, str(error)) == ("boom", "api_error", None, "boom")
    assert [f.name for f in dataclasses.fields(ar.LLMError)] == ["message", "code", "retry_after"]
    for cls in (ar.RateLimitError, ar.TimeoutError, ar.InvalidResponseError, ar.ToolNotFoundError):
        assert issubclass(cls, ar.LLMError)


def test_errors_generic_api_failure_is_llm_error(gemini: FakeHTTP) -> None:
    """Error Types, LLMError: a generic API failure (500 after the configured retry) with the llmplex cause."""
    for _ in range(2):
        gemini.reply(500, json_body=error_body(500, "INTERNAL", "An internal error has occurred."))
    with pytest.raises(ar.LLMError) as caught:
        run(ar.GeminiAdapter(KEY).generate([user("hi")], []))
    assert type(caught.value) is ar.LLMError and caught.value.code == "server"
    assert len(gemini.sent) == 2, "LLMConfig.max_retries=1: one retry"
    assert KEY not in str(caught.value)


@pytest.mark.parametrize(("delay", "seconds"), [("37s", 37), ("1.5s", 2)])
def test_errors_rate_limit_with_retry_after_in_whole_seconds(gemini: FakeHTTP, delay: str, seconds: int) -> None:
    """Error Types, RateLimitError: ``retry_after`` is an int of seconds (Gemini's RetryInfo, rounded up)."""
    details = [{"@type": RETRY_INFO, "retryDelay": delay}]
    gemini.reply(429, json_body=error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", details))
    with pytest.raises(ar.RateLimitError) as caught:
        run(ar.GeminiAdapter(KEY, max_retries=0).generate([user("hi")], []))
    assert caught.value.retry_after == seconds and isinstance(caught.value.retry_after, int)
    assert caught.value.code == "rate_limit"


def test_errors_rate_limit_from_another_provider(fault_toml: FaultServer) -> None:
    """Error Types, RateLimitError: the same class whatever the provider (Retry-After header, 429)."""
    fault_toml.enqueue(Fault.rate_limit(retry_after=3))
    with pytest.raises(ar.RateLimitError) as caught:
        run(ar.adapter_for("fault:gpt-4o-mini", max_retries=0).generate([user("hi")], []))
    assert caught.value.retry_after == 3


def test_errors_timeout(fault_toml: FaultServer) -> None:
    """Error Types, TimeoutError: a request that does not finish within ``timeout_seconds`` (also a builtin one)."""
    fault_toml.enqueue(Fault.hang(10))
    adapter = ar.adapter_for("fault:gpt-4o-mini", timeout_seconds=0.5)

    async def generate() -> ar.LLMResponse:
        late.on_loop()
        return await adapter.generate([user("hi")], [])

    # made a moment before the call makes its own deadline of 0.5 s (``tests.support.late``: the time a busy
    # machine keeps the caller waiting for a CPU is not counted)
    late = Late.after(0.5)
    with pytest.raises(ar.TimeoutError) as caught:
        run(generate())
    seconds = late.seconds()
    assert seconds < 1.5, late.describe(seconds)
    assert isinstance(caught.value, builtins.TimeoutError)


def test_errors_invalid_response_for_unreadable_function_arguments() -> None:
    """Error Types, InvalidResponseError: malformed LLM output (function-call arguments that are not an object)."""
    adapter = ar.adapter_for("mock:echo")
    adapter.client.provider_client("mock").push(tool_calls=[{"name": "add_task", "arguments": "{not json"}])
    with pytest.raises(ar.InvalidResponseError, match="add_task"):
        run(adapter.generate([user("hi")], adapter.get_tool_declarations(["add_task"])))


def test_errors_tool_not_found() -> None:
    """Error Types, ToolNotFoundError: a tool name the registry does not know."""
    with pytest.raises(ar.ToolNotFoundError) as caught:
        ar.adapter_for("mock:echo").get_tool_declarations(["add_task", "send_email"])
    assert "send_email" in caught.value.message and caught.value.code == "tool_not_found"


def test_errors_recommended_handling_refusal_on_rate_limit(fault_toml: FaultServer) -> None:
    """Error Types, recommended handling: the runtime can return REFUSAL:RATE_LIMITED on RateLimitError."""
    fault_toml.enqueue(Fault.rate_limit())

    async def handle(adapter: ar.LLMAdapter) -> str:
        try:
            return (await adapter.generate([user("hi")], [])).content or ""
        except ar.RateLimitError:
            return "REFUSAL:RATE_LIMITED"

    assert run(handle(ar.adapter_for("fault:gpt-4o-mini", max_retries=0))) == "REFUSAL:RATE_LIMITED"


# -- "Tool Declaration Schema" and "Full Tool Registry" ------------------------------------------------------------


def test_tool_registry_answers_every_seed_tool_in_the_order_asked(gemini: FakeHTTP) -> None:
    """Full Tool Registry: the five MCP tools come back as declarations, in the order asked, and Gemini gets them."""
    adapter = ar.GeminiAdapter(KEY)
    declared = adapter.get_tool_declarations(list(reversed(NAMES)))
    assert [d.name for d in declared] == list(reversed(NAMES))
    assert declared[-1] == ar.ToolDeclaration(**TOOL_DECLARATIONS[0])
    gemini.reply(json_body=response([function_call_part("list_tasks", {"status": "pending"})]))
    answer = run(adapter.generate([user("what is pending?")], declared))
    assert answer.function_calls == [ar.FunctionCall("list_tasks", {"status": "pending"})]
    sent = gemini_body(gemini)["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in sent] == list(reversed(NAMES))


def test_tool_declaration_schema_example_is_accepted(registry: list[dict[str, Any]]) -> None:
    """Tool Declaration Schema: the add_task example (name, description, JSON-Schema parameters) is a declaration."""
    example = {
        "name": "add_task",
        "description": "Create a new task for the user. Use this when the user wants to add, create, or "
        "remember something as a task.",
        "parameters": {
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "The task description (1-1000 characters)"}
            },
            "required": ["description"],
        },
    }
    registry[:] = [example]
    adapter = ar.adapter_for("mock:echo")
    (declared,) = adapter.get_tool_declarations(["add_task"])
    run(adapter.generate([user("hi")], [declared]))
    assert adapter.client.provider_client("mock").calls[-1]["tools"][0]["parameters"] == example["parameters"]


def test_tool_registry_per_adapter() -> None:
    """The registry can also be handed to one adapter (``registry=``), leaving the module's alone."""
    adapter = ar.adapter_for("mock:echo", registry=[{"name": "ping", "description": "Ping.", "parameters": {}}])
    assert [d.name for d in adapter.get_tool_declarations(["ping"])] == ["ping"]
    with pytest.raises(ar.ToolNotFoundError):
        adapter.get_tool_declarations(["add_task"])


# -- "Configuration Contract" --------------------------------------------------------------------------------------


def test_configuration_contract_defaults() -> None:
    """Configuration Contract: LLMConfig(api_key required, model gemini-2.0-flash, temperature 0.0,
    max_tokens 1024, timeout_seconds 30, max_retries 1)."""
    config = ar.LLMConfig(api_key=KEY)
    assert (config.model, config.temperature, config.max_tokens) == ("gemini-2.0-flash", 0.0, 1024)
    assert (config.timeout_seconds, config.max_retries) == (30, 1)
    with pytest.raises(TypeError):
        ar.LLMConfig()  # type: ignore[call-arg]


def test_configuration_environment_variables(gemini: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> None:
    """Environment Variables: GEMINI_API_KEY required, GEMINI_MODEL an optional override."""
    with pytest.raises(ar.LLMError, match="GEMINI_API_KEY"):
        ar.LLMConfig.from_env()
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    assert ar.LLMConfig.from_env().model == "gemini-2.0-flash"
    monkeypatch.setenv("GEMINI_MODEL", "gemini-2.5-flash-lite")
    config = ar.LLMConfig.from_env()
    assert (config.api_key, config.model) == (KEY, "gemini-2.5-flash-lite")
    gemini.reply(json_body=response([text_part("ok")], model="gemini-2.5-flash-lite"))
    run(ar.GeminiAdapter.from_config(config).generate([user("hi")], []))
    assert gemini.last().url.endswith("/models/gemini-2.5-flash-lite:generateContent")
    gemini.reply(json_body=response([text_part("ok")], model="gemini-2.5-flash-lite"))
    run(ar.adapter_for("gemini:").generate([user("hi")], []))  # llmplex reads GEMINI_MODEL too
    assert gemini.last().url.endswith("/models/gemini-2.5-flash-lite:generateContent")


def test_configuration_timeout_and_retries_from_llm_config(fault_toml: FaultServer) -> None:
    """Configuration Contract: timeout_seconds and max_retries are honoured (max_retries=2: three requests)."""
    fault_toml.enqueue(Fault.server_error(503), Fault.server_error(503), Fault.ok("third time"))
    adapter = ar.adapter_for("fault:gpt-4o-mini", timeout_seconds=10, max_retries=2)
    assert run(adapter.generate([user("hi")], [])).content == "third time"
    assert fault_toml.request_count == 3


# -- issue 13's rules where the seed is silent ---------------------------------------------------------------------


def test_adapter_for_resolves_config_instances(fault_toml: FaultServer) -> None:
    """adapter_for(model) resolves a config instance; the tools reach it in its own wire shape."""
    fault_toml.enqueue(Fault.ok("listed"))
    adapter = ar.adapter_for("fault:gpt-4o-mini")
    assert run(adapter.generate([user("list")], adapter.get_tool_declarations(["list_tasks"]))).content == "listed"
    (request,) = fault_toml.requests
    assert request.body["tools"][0] == {"type": "function", "function": TOOL_DECLARATIONS[1]}


def test_adapter_for_claude_code_drops_the_temperature(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adapter_for("claude-code:...") works: generate's temperature, which the CLI cannot take, is dropped."""
    FakeCLI(tmp_path / "bin", monkeypatch, found_by_env=True)
    answer = run(ar.adapter_for("claude-code:haiku").generate([user("hi")], [], temperature=0.0))
    assert (answer.content, answer.finish_reason) == ("Hello there", "stop")


def test_unknown_provider_is_the_contracts_error() -> None:
    """adapter_for with an unknown provider raises the contract's LLMError (code "configuration")."""
    with pytest.raises(ar.LLMError) as caught:
        ar.adapter_for("nosuch:model")
    assert caught.value.code == "configuration" and "unknown provider" in caught.value.message
