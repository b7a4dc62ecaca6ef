"""Issue 21 item 4: prompt caching — Anthropic ``cache_control`` (explicit and ``prompt_cache="auto"``, at most
four breakpoints), OpenAI's ``prompt_cache_key``, cached tokens in their bucket, priced at the cache-read rate.

Each provider is faked at the HTTP layer under its real SDK; every Anthropic
payload is checked against the SDK's own ``MessageCreateParams`` types.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.testing.media import PNG
from llmplex.types import Image, Message, Tool
from tests.contract import fixtures_openai as fx
from tests.plugins.anthropic.wire import MODEL, check_create_params, message, text_block, usage
from tests.plugins.openai.conftest import FakeAPI
from tests.state.conftest import FakeHTTP

EPHEMERAL = {"type": "ephemeral"}
LOOKUP = Tool(name="lookup", description="Look a word up", parameters={"type": "object", "properties": {}})
SPELL = Tool(name="spell", description="Spell a word", parameters={"type": "object", "properties": {}})
LONG_SYSTEM = "You are a careful assistant. " * 40


def _client(**overrides: object) -> llmplex.Client:
    return llmplex.Client(throttle={"max_attempts": 1}, **overrides)


def _marks(payload: dict[str, object]) -> list[str]:
    """Where the payload's breakpoints are, as ``tools[i]``, ``system[i]``, ``messages[i][j]``."""
    found = [f"tools[{i}]" for i, tool in enumerate(payload.get("tools") or []) if "cache_control" in tool]
    system = payload.get("system")
    if isinstance(system, list):
        found += [f"system[{i}]" for i, block in enumerate(system) if "cache_control" in block]
    for i, turn in enumerate(payload["messages"]):  # type: ignore[arg-type]
        if isinstance(turn["content"], list):
            found += [f"messages[{i}][{j}]" for j, block in enumerate(turn["content"]) if "cache_control" in block]
    return found


def test_item_4_explicit_cache_marks_on_tools_system_messages_and_parts(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    fake_http.reply(json_body=message([text_block("ok")]))
    image = Image.from_bytes(PNG).cached()
    history = [
        Message.system(LONG_SYSTEM, cache=True),
        Message.user(["What is in this picture?", image, "Answer briefly."]),
        Message.assistant("A cat."),
        Message.user("And its colour?", cache=True),
    ]
    response = _client().complete(f"anthropic:{MODEL}", history, tools=[LOOKUP.model_copy(update={"cache": True})])

    assert response.text == "ok"
    payload = fake_http.last().json()
    check_create_params(payload)
    assert _marks(payload) == ["tools[0]", "system[0]", "messages[0][1]", "messages[2][0]"]
    assert payload["system"] == [{"type": "text", "text": LONG_SYSTEM, "cache_control": EPHEMERAL}]
    assert payload["messages"][0]["content"][1]["type"] == "image"
    assert payload["messages"][1] == {"role": "assistant", "content": "A cat."}  # unmarked turns stay compact


def test_item_4_auto_places_breakpoints_on_the_stable_prefix(fake_http: FakeHTTP, anthropic_key: str) -> None:
    fake_http.reply(json_body=message([text_block("ok")]))
    history = [Message.user("Define 'cache'."), Message.assistant("A store."), Message.user("Spell it.")]

    _client(prompt_cache="auto").complete(f"anthropic:{MODEL}", history, system=LONG_SYSTEM, tools=[LOOKUP, SPELL])

    payload = fake_http.last().json()
    check_create_params(payload)
    assert _marks(payload) == ["tools[1]", "system[0]", "messages[2][0]"]
    assert payload["messages"][2]["content"] == [{"type": "text", "text": "Spell it.", "cache_control": EPHEMERAL}]


def test_item_4_auto_never_goes_past_four_breakpoints(fake_http: FakeHTTP, anthropic_key: str) -> None:
    """Three explicit marks leave room for one automatic one: the last tool's, the first place auto fills."""
    fake_http.reply(json_body=message([text_block("ok")]))
    history = [Message.user("a", cache=True), Message.assistant("b"), Message.user("c", cache=True), Message.user("d")]

    _client(prompt_cache="auto").complete(
        f"anthropic:{MODEL}", history, system=LONG_SYSTEM, tools=[LOOKUP.model_copy(update={"cache": True}), SPELL]
    )

    payload = fake_http.last().json()
    check_create_params(payload)
    assert len(_marks(payload)) == 4
    assert "system[0]" in _marks(payload)


def test_item_4_more_than_four_explicit_breakpoints_are_refused_and_nothing_is_sent(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    history = [Message.system("s", cache=True)] + [Message.user(f"turn {i}", cache=True) for i in range(4)]
    with pytest.raises(LLMConfigurationError, match=r"at most 4 cache breakpoints.*marks 5"):
        _client().complete(f"anthropic:{MODEL}", history)
    assert fake_http.sent == []


def test_item_4_a_second_call_with_the_same_prefix_is_priced_at_the_cache_read_rate(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    """claude-sonnet-4-6 as published: $3 input, $3.75 cache write (5 min), $0.30 cache read, $15 output per MTok."""
    fake_http.reply(json_body=message([text_block("one")], message_usage=usage(50, 10, cache_creation=2000)))
    fake_http.reply(json_body=message([text_block("two")], message_usage=usage(50, 10, cache_read=2000)))
    llm = _client(prompt_cache="auto")

    first = llm.complete(f"anthropic:{MODEL}", "Question one", system=LONG_SYSTEM)
    second = llm.complete(f"anthropic:{MODEL}", "Question two", system=LONG_SYSTEM)

    assert (first.usage.input_tokens, first.usage.cache_write_tokens, first.usage.cached_tokens) == (2050, 2000, 0)
    assert (second.usage.input_tokens, second.usage.cache_write_tokens, second.usage.cached_tokens) == (2050, 0, 2000)
    per_token = {"input": Decimal("3") / 10**6, "write": Decimal("3.75") / 10**6, "read": Decimal("0.3") / 10**6}
    output = 10 * Decimal("15") / 10**6
    assert first.usage.cost_usd == 50 * per_token["input"] + 2000 * per_token["write"] + output
    assert second.usage.cost_usd == 50 * per_token["input"] + 2000 * per_token["read"] + output
    assert second.usage.cost_usd == Decimal("0.0009")
    assert [_marks(sent.json()) for sent in fake_http.sent] == [["system[0]", "messages[0][0]"]] * 2


def test_item_4_openai_prompt_cache_key_names_the_stable_prefix(openai_api: FakeAPI) -> None:
    for _ in range(3):
        openai_api.reply("/responses", fx.response_text("ok", usage=fx.TokenUsage(2000, 5, 1920)))
    llm = _client(prompt_cache="auto")

    first = llm.complete("openai:gpt-4o-mini", "one", system=LONG_SYSTEM)
    llm.complete("openai:gpt-4o-mini", "two", system=LONG_SYSTEM)
    llm.complete("openai:gpt-4o-mini", "three", system="Another system prompt.")

    keys = [body["prompt_cache_key"] for body in openai_api.bodies]
    assert keys[0] == keys[1] != keys[2]
    assert all(key.startswith("llmplex-") and len(key) <= 64 for key in keys)
    assert (first.usage.input_tokens, first.usage.cached_tokens) == (2000, 1920)  # cached tokens in their bucket


def test_item_4_openai_prompt_cache_key_given_by_the_caller_wins_and_none_without_auto(openai_api: FakeAPI) -> None:
    openai_api.reply("/responses", fx.response_text("ok"))
    _client(prompt_cache="auto").complete("openai:gpt-4o-mini", "hi", provider_options={"prompt_cache_key": "mine"})
    _client().complete("openai:gpt-4o-mini", "hi")

    assert openai_api.bodies[0]["prompt_cache_key"] == "mine"
    assert "prompt_cache_key" not in openai_api.bodies[1]


def test_item_4_cache_marks_to_a_provider_without_a_prompt_cache_are_refused_or_dropped() -> None:
    """The built-in mock has no prompt cache: a mark is an error naming it and the instance, or with
    drop_unsupported it is left out and listed; prompt_cache="auto" asks only where there is a cache."""
    with pytest.raises(LLMConfigurationError, match=r"provider 'mock' has no prompt cache.*messages\[0\]"):
        _client().complete("mock:echo", [Message.user("hi", cache=True)])

    dropped = _client(drop_unsupported=True).complete("mock:echo", [Message.user("hi", cache=True)])
    assert dropped.dropped == ("cache=True on messages[0]",)
    assert _client(prompt_cache="auto").complete("mock:echo", "hi").dropped == ()
