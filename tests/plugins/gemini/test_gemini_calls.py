"""End to end through ``llmplex.Client`` and the real google-genai SDK, over a fake network."""

from __future__ import annotations

import pytest

import llmplex
from llmplex.errors import LLMRefusalError
from llmplex.types import Message, OutputSchema, Tool, ToolCall
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.gemini.wire import (
    MODEL,
    check_wire_body,
    function_call_part,
    response,
    stream_body,
    text_part,
    usage,
)

__all__ = ["fake_http"]

KEY = "AIzaSyTESTKEY_0123456789abcdefghij"
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ENDPOINT = "https://generativelanguage.googleapis.com"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return llmplex.Client(throttle={"max_attempts": 1})


def test_text_answer_with_usage(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([text_part("Hello!")], usage_metadata=usage(5, 2, thoughts=3, cached=4)))
    answer = llm.complete(f"gemini:{MODEL}", "Say hi", system="Be brief.")
    assert answer.text == "Hello!"
    assert answer.finish_reason == "stop"
    assert answer.usage.input_tokens == 5
    assert answer.usage.output_tokens == 5
    assert answer.usage.reasoning_tokens == 3
    assert answer.usage.cached_tokens == 4
    assert answer.usage.total_tokens == 10
    assert answer.model == MODEL
    assert answer.response_id == "Y2mBaPe0JcS7mtkPrOTR6Qc"
    sent = fake_http.last()
    assert sent.url.startswith(f"{ENDPOINT}/")
    assert sent.url.endswith(f"/models/{MODEL}:generateContent")
    assert sent.headers["x-goog-api-key"] == KEY
    body = sent.json()
    check_wire_body(body)
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Say hi"}]}]


def test_google_api_key_is_the_fallback_variable(monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    fake_http.reply(json_body=response([text_part("ok")]))
    llmplex.Client().complete(f"gemini:{MODEL}", "Hi")
    assert fake_http.last().headers["x-goog-api-key"] == KEY


def test_thought_parts_are_not_answer_text(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([text_part("thinking...", thought=True), text_part("42")]))
    assert llm.complete(f"gemini:{MODEL}", "Answer?").text == "42"


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("RECITATION", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "error"),
        ("LANGUAGE", "other"),
        ("OTHER", "other"),
    ],
)
def test_finish_reasons(llm: llmplex.Client, fake_http: FakeHTTP, reason: str, finish: str) -> None:
    fake_http.reply(json_body=response([text_part("partial")], finish_reason=reason))
    assert llm.complete(f"gemini:{MODEL}", "Hi").finish_reason == finish


def test_safety_stop_is_a_refusal_naming_the_category(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    ratings = [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
        {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    ]
    fake_http.reply(json_body=response([], finish_reason="SAFETY", safety_ratings=ratings))
    with pytest.raises(LLMRefusalError, match="SAFETY") as caught:
        llm.complete(f"gemini:{MODEL}", "How do I ...")
    assert caught.value.refusal == "HARM_CATEGORY_DANGEROUS_CONTENT"
    assert not caught.value.retryable
    assert caught.value.provider == "gemini"


def test_blocked_prompt_is_a_refusal(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    feedback = {
        "blockReason": "PROHIBITED_CONTENT",
        "blockReasonMessage": "The prompt was blocked.",
    }
    fake_http.reply(json_body=response(prompt_feedback=feedback))
    with pytest.raises(LLMRefusalError, match="blocked the prompt \\(PROHIBITED_CONTENT\\)"):
        llm.complete(f"gemini:{MODEL}", "...")


async def test_async_call_uses_httpx2_not_aiohttp(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([text_part("async hi")]))
    answer = await llm.acomplete(f"gemini:{MODEL}", "Hi", max_tokens=16)
    assert answer.text == "async hi"
    assert fake_http.last().json()["generationConfig"]["maxOutputTokens"] == 16


def test_tool_round_trip(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([function_call_part("get_weather", {"city": "Paris"})]))
    first = llm.complete(f"gemini:{MODEL}", "Weather in Paris?", tools=[WEATHER])
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == (ToolCall(id="gemini-call-0", name="get_weather", arguments='{"city": "Paris"}'),)

    fake_http.reply(json_body=response([text_part("Sunny.")]))
    history = [Message.user("Weather in Paris?"), first.message(), Message.tool("gemini-call-0", "sunny")]
    assert llm.complete(f"gemini:{MODEL}", history, tools=[WEATHER]).text == "Sunny."
    body = fake_http.last().json()
    check_wire_body(body)
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
    }
    assert body["contents"][2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}}],
    }
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"


def test_call_ids_from_gemini_are_kept(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([function_call_part("get_weather", {"city": "Rome"}, call_id="fc-7")]))
    answer = llm.complete(f"gemini:{MODEL}", "Weather?", tools=[WEATHER])
    assert answer.tool_calls[0].id == "fc-7"


def test_structured_output(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    schema = OutputSchema(
        name="city",
        json_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    fake_http.reply(json_body=response([text_part('{"name": "Paris"}')]))
    answer = llm.complete(f"gemini:{MODEL}", "Capital of France?", output=schema)
    assert answer.output == {"name": "Paris"}
    config = fake_http.last().json()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema.json_schema


def test_stream_text_calls_usage_and_finish(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    chunks = [
        response([text_part("Hel")], finish_reason=None),
        response([text_part("lo")], finish_reason=None),
        response([function_call_part("get_weather", {"city": "Oslo"})], usage_metadata=usage(6, 3)),
    ]
    fake_http.reply_stream(stream_body(chunks))
    events = list(llm.stream(f"gemini:{MODEL}", "Hi", tools=[WEATHER]))
    assert "".join(e.text for e in events if e.type == "text") == "Hello"
    final = events[-1].response
    assert final is not None
    assert final.text == "Hello"
    assert final.finish_reason == "tool_calls"
    assert final.tool_calls == (ToolCall(id="gemini-call-0", name="get_weather", arguments='{"city": "Oslo"}'),)
    assert final.usage.input_tokens == 6
    assert final.usage.output_tokens == 3
    sent = fake_http.last()
    assert sent.url.endswith(f"/models/{MODEL}:streamGenerateContent?alt=sse")
    check_wire_body(sent.json())


async def test_async_stream(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    chunks = [response([text_part("a")], finish_reason=None), response([text_part("b")], usage_metadata=usage())]
    fake_http.reply_stream(stream_body(chunks))
    events = [e async for e in llm.astream(f"gemini:{MODEL}", "Hi")]
    assert [e.text for e in events if e.type == "text"] == ["a", "b"]
    assert events[-1].response is not None
    assert events[-1].response.finish_reason == "stop"


def test_safety_stop_in_a_stream_raises_a_refusal(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    chunks = [response([text_part("Sure, ")], finish_reason=None), response([], finish_reason="SAFETY")]
    fake_http.reply_stream(stream_body(chunks))
    with pytest.raises(LLMRefusalError):
        list(llm.stream(f"gemini:{MODEL}", "..."))


def test_timeout_reaches_the_sdk_per_call(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([text_part("ok")]))
    llm.complete(f"gemini:{MODEL}", "Hi", timeout=7.5)
    assert 0 < int(fake_http.last().headers["x-server-timeout"]) <= 8


def test_local_instance_needs_no_key_and_ignores_the_cloud_key(
    monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    llm = llmplex.Client(providers={"local-gemini": {"plugin": "gemini", "base_url": "http://127.0.0.1:9"}})
    fake_http.reply(json_body=response([text_part("local")]))
    assert llm.complete("local-gemini:gemma", "Hi").text == "local"
    sent = fake_http.last()
    assert sent.url.startswith("http://127.0.0.1:9/")
    assert KEY not in str(sent.headers)


def test_missing_key_is_a_configuration_error_naming_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(llmplex.LLMConfigurationError, match="GEMINI_API_KEY"):
        llmplex.Client().complete(f"gemini:{MODEL}", "Hi")
