"""Issue 21 item 5: reasoning state carried across turns, byte for byte, on the provider that made it;
dropped (with an event) on any other; ``reasoning_effort`` mapped per provider.

Each provider is faked at the HTTP layer under its real SDK. The signatures
are deliberately odd (a tampered one, padding, non-ASCII): llmplex never reads
them, so whatever came must go back unchanged, and the fake server checks it.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.events import Dropped
from llmplex.hookspecs import hookimpl
from llmplex.types import Message, ReasoningPart
from tests.contract import fixtures_openai as fx
from tests.plugins.anthropic.fake_http import sse
from tests.plugins.anthropic.wire import MODEL, check_create_params, message, text_block, tool_use_block
from tests.plugins.gemini import wire as gemini_wire
from tests.plugins.openai.conftest import FakeAPI
from tests.state.conftest import FakeHTTP

TAMPERED = "EqQBCkgIARABGAIiQL+tampered/sig==\u00e9\u2603"
THINKING = {"type": "thinking", "thinking": "The user wants the weather; call the tool.", "signature": TAMPERED}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr=="}
CALLS: list[str] = []
_OUT = {"output_tokens": 9}


def weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city's name.
    """
    CALLS.append(city)
    return f"18C and sunny in {city}"


def _client(**overrides: object) -> llmplex.Client:
    return llmplex.Client(throttle={"max_attempts": 1}, **overrides)


class _Observer:
    def __init__(self) -> None:
        self.dropped: list[Dropped] = []

    @hookimpl
    def llmplex_event(self, event: object) -> None:
        if isinstance(event, Dropped):
            self.dropped.append(event)


# -- Anthropic ----------------------------------------------------------------------


def test_item_5_anthropic_tool_loop_with_thinking_replays_the_blocks_verbatim(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    CALLS.clear()
    call = tool_use_block("weather", {"city": "Paris"}, "toolu_01Paris")
    fake_http.reply(json_body=message([THINKING, REDACTED, call], stop_reason="tool_use"))
    fake_http.reply(json_body=message([text_block("It is 18C and sunny.")]))

    answer = _client().complete(f"anthropic:{MODEL}", "Weather in Paris?", tools=[weather], reasoning_effort="high")

    assert answer.text == "It is 18C and sunny." and CALLS == ["Paris"]
    first, second = (sent.json() for sent in fake_http.sent)
    check_create_params(first)
    check_create_params(second)
    assert first["thinking"] == {"type": "adaptive"} and first["output_config"] == {"effort": "high"}
    assert second["messages"][1] == {"role": "assistant", "content": [THINKING, REDACTED, call]}
    assert TAMPERED.encode() in fake_http.sent[1].body  # the signature's bytes, unchanged


def test_item_5_anthropic_streamed_thinking_becomes_the_same_opaque_part(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    events = [
        ("message_start", {"type": "message_start", "message": _start()}),
        _block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        _delta(0, {"type": "thinking_delta", "thinking": "The user wants "}),
        _delta(0, {"type": "thinking_delta", "thinking": "the weather; call the tool."}),
        _delta(0, {"type": "signature_delta", "signature": TAMPERED}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _block(1, {"type": "redacted_thinking", "data": REDACTED["data"]}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _block(2, {"type": "text", "text": "Checking."}),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": _OUT}),
        ("message_stop", {"type": "message_stop"}),
    ]
    fake_http.reply_stream(sse(events))
    fake_http.reply(json_body=message([text_block("ok")]))
    llm = _client()

    streamed = list(llm.stream(f"anthropic:{MODEL}", "Weather?", reasoning_effort="low"))
    response = streamed[-1].response
    assert response is not None
    assert [part.data for part in response.reasoning] == [THINKING, REDACTED]
    assert "".join(e.text for e in streamed if e.type == "reasoning") == THINKING["thinking"]

    llm.complete(f"anthropic:{MODEL}", [Message.user("Weather?"), response.message(), Message.user("Thanks")])
    replayed = fake_http.last().json()["messages"][1]["content"]
    assert replayed == [THINKING, REDACTED, {"type": "text", "text": "Checking."}]


@pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5' is deprecated:DeprecationWarning")
def test_item_5_anthropic_budget_models_get_a_thinking_budget_below_max_tokens(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    fake_http.reply(json_body=message([text_block("ok")], model="claude-sonnet-4-5"))
    _client().complete("anthropic:claude-sonnet-4-5", "hi", reasoning_effort="medium")
    sent = fake_http.last().json()
    check_create_params(sent)
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert sent["max_tokens"] > 4096 and "output_config" not in sent

    with pytest.raises(LLMConfigurationError, match=r"thinking budget of 16384 tokens.*max_tokens \(1000\)"):
        _client().complete("anthropic:claude-sonnet-4-5", "hi", reasoning_effort="high", max_tokens=1000)
    assert len(fake_http.sent) == 1  # the refused call sent nothing


# -- OpenAI Responses ---------------------------------------------------------------


REASONING_ITEM = {
    "id": "rs_68af3b2c1d4e8190a1b2c3d4e5f60718",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
    "encrypted_content": "gAAAAABoTAMPERED+/==\u00e9",
}


def test_item_5_openai_reasoning_items_go_back_verbatim_with_nothing_stored(openai_api: FakeAPI) -> None:
    call = fx.function_call_item(fx.FunctionCall("weather", '{"city":"Paris"}'))
    openai_api.reply("/responses", fx.response(REASONING_ITEM, call))
    openai_api.reply("/responses", fx.response_text("18C."))
    CALLS.clear()

    stored_nothing = {"store": False}
    answer = _client().complete(
        "openai:o4-mini", "Weather in Paris?", tools=[weather], reasoning_effort="low", provider_options=stored_nothing
    )

    assert answer.text == "18C." and CALLS == ["Paris"]
    first, second = openai_api.bodies
    assert first["reasoning"] == {"effort": "low"} and first["include"] == ["reasoning.encrypted_content"]
    assert second["input"][1] == REASONING_ITEM
    assert second["input"][2]["type"] == "function_call" and second["input"][3]["type"] == "function_call_output"


def test_item_5_openai_chat_gets_reasoning_effort_by_its_own_name(openai_api: FakeAPI) -> None:
    openai_api.reply("/chat/completions", fx.chat_completion("ok"))
    chat = {"plugin": "openai", "api": "chat", "api_key": "sk-chat-test-123456"}
    _client(providers={"oc": chat}).complete("oc:o4-mini", "hi", reasoning_effort="high")
    assert openai_api.bodies[-1]["reasoning_effort"] == "high"


# -- Gemini ---------------------------------------------------------------------------


def test_item_5_gemini_thought_signatures_go_back_with_their_parts(
    fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_0123456789abcdefghij")
    signature = base64.b64encode(b"\x00\xfftampered signature\xe9\x01").decode()
    call = gemini_wire.function_call_part("weather", {"city": "Paris"}) | {"thoughtSignature": signature}
    thought = gemini_wire.text_part("I should call the tool.", thought=True)
    fake_http.reply(json_body=gemini_wire.response([thought, call], model="gemini-3-pro-preview"))
    fake_http.reply(json_body=gemini_wire.response([gemini_wire.text_part("18C.")], model="gemini-3-pro-preview"))
    CALLS.clear()

    answer = _client().complete("gemini:gemini-3-pro-preview", "Weather?", tools=[weather], reasoning_effort="low")

    assert answer.text == "18C." and CALLS == ["Paris"]
    first, second = (sent.json() for sent in fake_http.sent)
    gemini_wire.check_wire_body(second)
    assert first["generationConfig"]["thinkingConfig"] == {"thinking_level": "LOW"}  # as the SDK writes it
    gemini_wire.check_wire_body(first)
    replayed = second["contents"][1]
    assert replayed["role"] == "model"
    assert replayed["parts"][0] == {"text": "I should call the tool.", "thought": True}
    sent_signature = replayed["parts"][1]["thoughtSignature"]
    assert base64.urlsafe_b64decode(sent_signature) == base64.b64decode(signature)  # the same bytes
    assert sent_signature != "skip_thought_signature_validator"


def test_item_5_gemini_2_gets_a_thinking_budget(fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_0123456789abcdefghij")
    fake_http.reply(json_body=gemini_wire.response([gemini_wire.text_part("ok")]))
    _client().complete(f"gemini:{gemini_wire.MODEL}", "hi", reasoning_effort="medium")
    assert fake_http.last().json()["generationConfig"]["thinkingConfig"] == {"thinking_budget": 8192}


# -- across providers -------------------------------------------------------------------


def test_item_5_reasoning_sent_to_another_provider_is_dropped_and_said(
    fake_http: FakeHTTP, anthropic_key: str, openai_api: FakeAPI
) -> None:
    fake_http.reply(json_body=message([THINKING, text_block("Paris.")]))
    openai_api.reply("/responses", fx.response_text("Yes."))
    observer = _Observer()
    llm = _client(plugins=[observer])

    first = llm.complete(f"anthropic:{MODEL}", "Capital of France?", reasoning_effort="low")
    history = [Message.user("Capital of France?"), first.message(), Message.user("Sure?")]
    second = llm.complete("openai:gpt-4o-mini", history)

    assert second.dropped == ("reasoning of messages[1] (anthropic)",)
    assert [event.dropped for event in observer.dropped] == [("reasoning of messages[1] (anthropic)",)]
    sent = openai_api.bodies[0]
    assert [item.get("type") for item in sent["input"]] == ["message", "message", "message"]
    assert TAMPERED not in json.dumps(sent)


def test_item_5_reasoning_parts_refuse_what_cannot_be_replayed() -> None:
    with pytest.raises(LLMConfigurationError, match="must be JSON data"):
        ReasoningPart(format="anthropic", data={"signature": b"bytes"})
    with pytest.raises(LLMConfigurationError, match="must be JSON data"):
        ReasoningPart(format="anthropic", data={"n": float("nan")})
    with pytest.raises(LLMConfigurationError, match="only assistant messages"):
        Message(role="user", content="hi", reasoning=(ReasoningPart(format="x", data={}),))
    part = ReasoningPart(format="anthropic", text="secret thoughts", data=THINKING)
    assert TAMPERED not in repr(Message.assistant("a", reasoning=(part,)))
    as_data = Message.assistant("a", reasoning=(part,)).model_dump(mode="json")
    assert Message.model_validate(as_data).reasoning == (part,)


# -- helpers -----------------------------------------------------------------------------


def _start() -> dict[str, Any]:
    return {
        "id": "msg_01Thinking",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1},
    }


def _block(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


# -- streams of openai and gemini ---------------------------------------------------------


def test_item_5_openai_streamed_reasoning_item_is_kept_whole(openai_api: FakeAPI) -> None:
    events = fx.responses_stream_text(["Paris."])
    reasoning_events = [
        {"type": "response.output_item.added", "output_index": 0, "item": {**REASONING_ITEM, "summary": []}},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": REASONING_ITEM["id"],
            "output_index": 0,
            "summary_index": 0,
            "delta": "Need the weather tool.",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING_ITEM},
    ]
    numbered = [{**event, "sequence_number": 100 + i} for i, event in enumerate(reasoning_events)]
    openai_api.stream("/responses", events[:2] + numbered + events[2:])
    openai_api.reply("/responses", fx.response_text("Yes."))
    llm = _client()

    streamed = list(llm.stream("openai:o4-mini", "Capital of France?", reasoning_effort="medium"))
    response = streamed[-1].response
    assert response is not None and response.text == "Paris."
    assert [part.data for part in response.reasoning] == [REASONING_ITEM]
    assert [e.text for e in streamed if e.type == "reasoning" and e.text] == ["Need the weather tool."]

    llm.complete("openai:o4-mini", [Message.user("Capital of France?"), response.message(), Message.user("Sure?")])
    assert openai_api.bodies[-1]["input"][1] == REASONING_ITEM


def test_item_5_gemini_streamed_signature_comes_whole_with_the_finish(
    fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_0123456789abcdefghij")
    signature = base64.b64encode(b"\x01stream-signed\xfe").decode()
    chunks = [
        gemini_wire.response([gemini_wire.text_part("Thinking...", thought=True)], finish_reason=None),
        gemini_wire.response([gemini_wire.text_part("Par")], finish_reason=None),
        gemini_wire.response([gemini_wire.text_part("is.") | {"thoughtSignature": signature}]),
    ]
    fake_http.reply_stream(gemini_wire.stream_body(chunks))
    fake_http.reply(json_body=gemini_wire.response([gemini_wire.text_part("Yes.")]))
    llm = _client()

    streamed = list(llm.stream(f"gemini:{gemini_wire.MODEL}", "Capital of France?"))
    response = streamed[-1].response
    assert response is not None and response.text == "Paris."
    (part,) = response.reasoning
    assert part.format == "gemini" and part.text == "Thinking..."

    history = [Message.user("Capital of France?"), response.message(), Message.user("Sure?")]
    llm.complete(f"gemini:{gemini_wire.MODEL}", history)
    sent = fake_http.last().json()
    gemini_wire.check_wire_body(sent)
    replayed = sent["contents"][1]["parts"]
    assert [p.get("text") for p in replayed] == ["Thinking...", "Par", "is."]
    assert base64.urlsafe_b64decode(replayed[2]["thoughtSignature"]) == base64.b64decode(signature)


def test_item_5_anthropic_thinking_with_a_forced_tool_is_refused_unsent(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    """The API refuses extended thinking with a forced tool call: said before sending, not as a 400."""
    with pytest.raises(LLMConfigurationError, match=r"extended thinking.*forced tool call"):
        _client().complete(
            f"anthropic:{MODEL}", "Weather?", tools=[weather], tool_choice="required", reasoning_effort="low"
        )
    assert fake_http.sent == []
