"""Issue 35 item 3: the originals' module-level helpers that their tests (and their users' code) reach by name
exist in ``llmplex.compat`` with the same behaviour."""

from __future__ import annotations

import sys
import types
from datetime import timedelta
from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock

import pytest
from pydantic import BaseModel

from llmplex.compat import agent_runtime as ar
from llmplex.compat.util_llm import BatchStats, LLMClient, LLMError, OpenAIAdapter, RequestResult
from llmplex.compat.util_llm.adapter import parse_reset_ms
from llmplex.compat.weakincentives import PROMPT_EVALUATION_PHASE_REQUEST, PromptEvaluationError, merge_config_params
from llmplex.compat.weakincentives import litellm as wi_litellm
from llmplex.compat.weakincentives import openai as wi_openai
from llmplex.compat.weakincentives import throttle as wi_throttle
from llmplex.compat.weakincentives.config import LLMConfig


class Answer(BaseModel):
    answer: str


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("100ms", 0.6), ("1.5s", 2.0), ("250", 0.75), (None, 1.5), ("soon", 1.5), ("-ms", 1.5)],
)
def test_item_3_util_llm_parse_reset_ms_reads_the_reset_header_plus_half_a_second(
    header: str | None, seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = {} if header is None else {"x-ratelimit-reset-tokens": header}
    assert parse_reset_ms(headers) == pytest.approx(seconds)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-parse-reset")
    adapter = OpenAIAdapter(SimpleNamespace(model="gpt-test", max_retries=0))
    assert adapter._parse_reset_ms(headers) == pytest.approx(seconds)


async def test_item_3_util_llm_batch_stats_count_every_request_of_the_last_call() -> None:
    def answer(text: str) -> Any:
        usage = SimpleNamespace(input_tokens=1, output_tokens=2, reasoning_tokens=1, cached_tokens=0, total_tokens=3)
        debug = SimpleNamespace(reasoning_summary=["thought"])
        return SimpleNamespace(response_id=f"r-{text}", parsed=Answer(answer=text), usage=usage, debug=debug)

    adapter = SimpleNamespace(
        execute=AsyncMock(side_effect=[answer("a"), LLMError("refused"), answer("c"), answer("d")]),
        delete_response=AsyncMock(),
    )
    entities = [{"identity": {"id": "bob"}}]
    client = LLMClient(adapter, entities)
    from llmplex.compat.util_llm import LLMRequest

    requests = [LLMRequest("i", str(n), Answer, entity_key="intention:bob") for n in range(3)]
    results = await client.create_batch(requests)
    assert isinstance(results[1], LLMError)
    stats = client.get_last_batch_stats()
    assert isinstance(stats, BatchStats)
    assert (stats.request_count, stats.success_count, stats.error_count, stats.total_tokens) == (3, 2, 1, 6)
    assert stats.results[0] == RequestResult("intention:bob", True, stats.results[0].usage, ["thought"])
    assert stats.results[1].success is False and stats.results[1].error
    usage = entities[0]["_openai"]["usage"]
    assert (usage["total_tokens"], usage["reasoning_tokens"], usage["total_requests"]) == (6, 2, 2)
    await client.create_response("i", "again", Answer)  # a new call starts new stats
    assert client.get_last_batch_stats().request_count == 1


def test_item_3_weakincentives_retry_after_helpers_read_every_place_weakincentives_read() -> None:
    assert wi_openai._coerce_retry_after(2) == timedelta(seconds=2)
    assert wi_openai._coerce_retry_after("3") == timedelta(seconds=3)
    for nothing in (0, -1, "soon", None, timedelta(0), True):
        assert wi_openai._coerce_retry_after(nothing) is None
    assert wi_openai._retry_after_from_error(SimpleNamespace(retry_after=1.5)) == timedelta(seconds=1.5)
    assert wi_openai._retry_after_from_error(SimpleNamespace(headers={"Retry-After": "4"})) == timedelta(seconds=4)
    nested = SimpleNamespace(response={"headers": {"retry-after": "5"}})
    assert wi_openai._retry_after_from_error(nested) == timedelta(seconds=5)
    assert wi_openai._retry_after_from_error(SimpleNamespace(response={"retry_after": 6})) == timedelta(seconds=6)
    on_object = SimpleNamespace(response=SimpleNamespace(headers={"retry-after": "7"}))
    assert wi_openai._retry_after_from_error(on_object) == timedelta(seconds=7)
    assert wi_litellm._retry_after_from_error(on_object) is None  # LiteLLM's read only mapping responses
    assert wi_litellm._retry_after_from_error(SimpleNamespace(headers={"Retry-After": "2"})) == timedelta(seconds=2)
    assert wi_openai._retry_after_from_error(SimpleNamespace(headers="not a mapping")) is None
    assert wi_openai._error_payload(SimpleNamespace(json_body={"error": 1})) == {"error": 1}
    assert wi_litellm._error_payload(SimpleNamespace(json_body={"error": 1})) is None


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (type("RateLimitError", (Exception,), {})("slow down"), "rate_limit"),
        (SimpleNamespace(), None),
        (Exception("insufficient_quota: pay"), "quota_exhausted"),
        (type("APITimeoutError", (Exception,), {})("late"), "timeout"),
        (Exception("plain"), None),
    ],
)
def test_item_3_throttle_normalization_kinds(error: Any, kind: str | None) -> None:
    if not isinstance(error, Exception):
        error = Exception("teapot")
        error.status_code = 429  # type: ignore[attr-defined]
        kind = "rate_limit"
    for normalized in (
        wi_openai._normalize_openai_throttle(error, prompt_name="p"),
        wi_litellm._normalize_litellm_throttle(error, prompt_name="p"),
    ):
        assert (normalized.details.kind if normalized else None) == kind
        if normalized is not None:
            assert normalized.phase == PROMPT_EVALUATION_PHASE_REQUEST and normalized.prompt_name == "p"


def test_item_3_responses_tool_choice_and_spec_as_weakincentives_normalized_them() -> None:
    assert wi_openai._responses_tool_choice("auto", prompt_name="p") == "auto"
    assert wi_openai._responses_tool_choice(None, prompt_name="p") is None
    forced = {"type": "function", "function": {"name": "search"}}
    assert wi_openai._responses_tool_choice(forced, prompt_name="p") == {"type": "function", "name": "search"}
    assert wi_openai._responses_tool_choice({"type": "function", "name": "s"}, prompt_name="p")["name"] == "s"
    for bad in ({"type": "function", "function": {"name": " "}}, {"type": "web_search"}, {"type": "function"}):
        with pytest.raises(PromptEvaluationError) as caught:
            wi_openai._responses_tool_choice(bad, prompt_name="p")
        assert caught.value.phase == PROMPT_EVALUATION_PHASE_REQUEST
    spec = {"type": "function", "function": {"name": "s", "description": " ", "parameters": {}, "strict": True}}
    assert wi_openai._responses_tool_spec(spec, prompt_name="p") == {
        "type": "function",
        "name": "s",
        "parameters": {},
        "strict": True,
    }
    with pytest.raises(PromptEvaluationError, match="only supports function tools"):
        wi_openai._responses_tool_spec({"type": "web_search"}, prompt_name="p")


def test_item_3_input_messages_and_choices_as_weakincentives_translated_them() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "s", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    assert wi_openai._normalize_input_messages(messages, prompt_name="p") == [
        {"type": "message", "role": "system", "content": "be brief"},
        {"type": "function_call", "call_id": "c1", "name": "s", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "done"},
    ]
    with pytest.raises(PromptEvaluationError, match="tool_call_id"):
        wi_openai._normalize_input_messages([{"role": "tool", "content": "x"}], prompt_name="p")
    call = SimpleNamespace(type="function_call", name="s", arguments={"q": 1}, call_id="c9")
    choice = wi_openai._choice_from_response(
        SimpleNamespace(output=[SimpleNamespace(type="reasoning"), call]), prompt_name="p"
    )
    assert choice.message is not None and choice.message.tool_calls is not None
    assert (choice.message.tool_calls[0].id, choice.message.tool_calls[0].function.arguments) == ("c9", '{"q": 1}')
    text = SimpleNamespace(content=[{"type": "output_text", "text": "hi", "parsed": {"a": 1}}])
    assert wi_openai._choice_from_response(SimpleNamespace(output=[text]), prompt_name="p").message.parsed == {"a": 1}
    with pytest.raises(PromptEvaluationError, match="did not include any output"):
        wi_openai._choice_from_response(SimpleNamespace(output=None), prompt_name="p")


def test_item_3_create_openai_client_and_the_adapter_building_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    class DummyOpenAI:
        def __init__(self, **kwargs: object) -> None:
            self.kwargs = kwargs
            self.responses = SimpleNamespace(create=lambda **_: None)

    dummy = types.ModuleType("openai")
    dummy.OpenAI = DummyOpenAI  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "openai", dummy)
    client = wi_openai.create_openai_client(api_key="secret-key")
    assert isinstance(client, DummyOpenAI) and client.kwargs == {"api_key": "secret-key"}
    built: list[dict[str, object]] = []
    monkeypatch.setattr(wi_openai, "create_openai_client", lambda **kw: built.append(kw) or DummyOpenAI(**kw))
    wi_openai.OpenAIAdapter(model="gpt-test", client_config=wi_openai.OpenAIClientConfig(api_key="secret-key"))
    assert built == [{"api_key": "secret-key"}]

    def missing(name: str, package: str | None = None) -> types.ModuleType:
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(wi_openai, "import_module", missing)
    monkeypatch.setattr(wi_litellm, "import_module", missing)
    for create in (wi_openai._load_openai_module, wi_litellm.create_litellm_completion):
        with pytest.raises(RuntimeError, match=r"pip install llmplex-.*pip install weakincentives\["):
            create()


def test_item_3_create_litellm_completion_merges_its_keywords_under_each_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, object]] = []
    dummy = types.ModuleType("litellm")
    dummy.completion = lambda *args, **kwargs: seen.append(kwargs) or "ok"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "litellm", dummy)
    assert wi_litellm.create_litellm_completion() is dummy.completion  # type: ignore[attr-defined]
    completion = wi_litellm.create_litellm_completion(api_key="k", temperature=0.1)
    assert completion(model="m", temperature=0.5) == "ok"
    assert seen == [{"api_key": "k", "temperature": 0.5, "model": "m"}]


def test_item_3_throttle_helpers_and_merge_config_params(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = wi_throttle.new_throttle_policy(base_delay=timedelta(seconds=1), max_delay=timedelta(seconds=4))
    monkeypatch.setattr(wi_throttle.random, "uniform", lambda _a, b: b)
    assert wi_throttle.jittered_backoff(policy=policy, attempt=3, retry_after=None) == timedelta(seconds=4)
    monkeypatch.setattr(wi_throttle.random, "uniform", lambda _a, _b: 0.0)
    assert wi_throttle.jittered_backoff(policy=policy, attempt=1, retry_after=None) == timedelta(seconds=1)
    assert wi_throttle.jittered_backoff(policy=policy, attempt=1, retry_after=timedelta(seconds=9)) == timedelta(
        seconds=9
    )
    slept: list[float] = []
    monkeypatch.setattr(wi_throttle.time, "sleep", slept.append)
    wi_throttle.sleep_for(timedelta(milliseconds=250))
    assert slept == [0.25]
    details = wi_throttle.throttle_details(kind="rate_limit", retry_after=timedelta(seconds=1))
    assert (details.kind, details.attempts, details.retry_safe) == ("rate_limit", 1, True)
    merged = merge_config_params({"model": "m", "temperature": 1.0}, LLMConfig(temperature=0.2))
    assert merged == {"model": "m", "temperature": 0.2}
    assert merge_config_params({"a": 1}, None) == {"a": 1}


def test_item_3_agent_runtime_error_constructors_as_the_runtime_calls_them() -> None:
    assert ar.RateLimitError().message == "Rate limit exceeded" and ar.RateLimitError().code == "rate_limited"
    assert ar.LLMTimeoutError is ar.TimeoutError and ar.LLMTimeoutError().message == "Request timed out"
    missing = ar.ToolNotFoundError("delete_database")
    assert missing.tool_name == "delete_database" and missing.code == "tool_not_found"
    assert ar.ToolNotFoundError("unknown tool", tool_name="x").tool_name == "x"
    with pytest.raises(TypeError):
        ar.LLMError("no code")  # type: ignore[call-arg]  # the contract's base class keeps code required
