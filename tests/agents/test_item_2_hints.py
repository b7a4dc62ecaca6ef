"""Issue 32 item 2: what only changes cost or speed is dropped and named; what changes the answer keeps its 400."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from tests.agents.conftest import agents_config, claude, oai
from tests.gateway.fake_anthropic import FakeAnthropic
from tests.gateway.harness import Gateway, running_gateway
from tests.support.fault_server import FaultServer

MARKED: Any = {
    "model": "mistral:mistral-small-latest",
    "max_tokens": 50,
    "system": [{"type": "text", "text": "You are a coder.", "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "read", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
    "output_config": {"effort": "high"},
    "metadata": {"user_id": "u-1"},
}


def test_item_2_cache_marks_and_effort_on_a_model_without_them_are_dropped_and_named(
    gateway: Gateway, fault_server: FaultServer
) -> None:
    raw = claude(gateway).messages.with_raw_response.create(**MARKED)
    assert raw.http_response.status_code == 200
    dropped = raw.headers["x-llmplex-dropped"].split("; ")
    assert "prompt-cache marks (3, the provider has no prompt cache)" in dropped
    assert "reasoning effort (the model has none)" in dropped and "metadata" in dropped
    sent = fault_server.requests[-1].body
    assert "reasoning_effort" not in sent and "cache_control" not in str(sent) and "metadata" not in sent


def test_item_2_with_drop_hints_off_a_hint_is_refused(fault_server: FaultServer, upstream: FakeAnthropic) -> None:
    strict = agents_config(fault_server, upstream, gateway={"drop_hints": False})
    with running_gateway(strict) as gateway, pytest.raises(anthropic.BadRequestError, match="metadata"):
        claude(gateway).messages.create(**MARKED)
    assert fault_server.requests == []


def test_item_2_the_same_hints_reach_a_provider_that_takes_them(gateway: Gateway, upstream: FakeAnthropic) -> None:
    from tests.plugins.anthropic.wire import MODEL, message, text_block

    upstream.reply(message([text_block("ok")]))
    raw = claude(gateway).messages.with_raw_response.create(**{**MARKED, "model": f"anthropic:{MODEL}"})
    assert raw.headers["x-llmplex-dropped"] == "metadata"  # llmplex keeps no metadata; the marks and effort went
    sent = upstream.bodies[-1]
    assert sent["tools"][0]["cache_control"] == {"type": "ephemeral"} and sent["output_config"] == {"effort": "high"}


ANSWER_CHANGING: Any = {"logprobs": True, "modalities": ["text", "audio"], "top_logprobs": 2, "functions": []}


def test_item_2_answer_changing_fields_keep_their_400_unless_dropped(
    fault_server: FaultServer, upstream: FakeAnthropic
) -> None:
    hi: Any = [{"role": "user", "content": "hi"}]
    with running_gateway(agents_config(fault_server, upstream)) as gateway:
        for field, value in ANSWER_CHANGING.items():
            with pytest.raises(openai.BadRequestError, match=field):
                oai(gateway).chat.completions.create(model="faulty:gpt-4o-mini", messages=hi, extra_body={field: value})
        with pytest.raises(openai.BadRequestError, match="n"):
            oai(gateway).chat.completions.create(model="faulty:gpt-4o-mini", messages=hi, n=2)
    assert fault_server.requests == []
    with running_gateway(agents_config(fault_server, upstream, drop_unsupported=True)) as gateway:
        raw = oai(gateway).chat.completions.with_raw_response.create(
            model="faulty:gpt-4o-mini", messages=hi, extra_body=ANSWER_CHANGING
        )
        assert set(raw.headers["x-llmplex-dropped"].split("; ")) == set(ANSWER_CHANGING)
    assert set(ANSWER_CHANGING).isdisjoint(fault_server.requests[-1].body)


def test_item_2_chat_hints_are_dropped_by_name(gateway: Gateway, fault_server: FaultServer) -> None:
    hi: Any = [{"role": "user", "content": "hi"}]
    raw = oai(gateway).chat.completions.with_raw_response.create(
        model="mistral:mistral-small-latest", messages=hi, user="u-1", metadata={"a": "b"}, prompt_cache_key="k"
    )
    assert set(raw.headers["x-llmplex-dropped"].split("; ")) == {"user", "metadata", "prompt_cache_key (OpenAI's own)"}
    assert {"user", "metadata", "prompt_cache_key"}.isdisjoint(fault_server.requests[-1].body)
