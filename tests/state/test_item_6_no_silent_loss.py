"""Issue 21 item 6: no silent loss — what a provider instance cannot honour is a typed error before anything is
sent, naming the option and the instance; ``drop_unsupported = true`` (top level or in one ``[providers.NAME]``
table) drops it instead, listed in ``Response.dropped`` and a ``Dropped`` event. Embedding ``dimensions`` and the
vectors' encoding are honoured or refused, never ignored.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator

import httpx
import pytest
import respx

import llmplex
from llmplex import LLMConfigurationError, LLMServerError
from llmplex.events import Dropped
from llmplex.hookspecs import hookimpl
from llmplex.testing.media import WAV
from llmplex.types import Audio, Message
from tests.contract import fixtures_openai as fx
from tests.plugins.anthropic.wire import MODEL, check_create_params, message, text_block
from tests.plugins.openai.conftest import API_KEY, OPENAI_URL, FakeAPI
from tests.state.conftest import FakeHTTP


class _Observer:
    def __init__(self) -> None:
        self.events: list[Dropped] = []

    @hookimpl
    def llmplex_event(self, event: object) -> None:
        if isinstance(event, Dropped):
            self.events.append(event)


def _client(**overrides: object) -> llmplex.Client:
    return llmplex.Client(throttle={"max_attempts": 1}, **overrides)


def test_item_6_an_option_the_instance_cannot_honour_is_refused_by_name_and_nothing_is_sent(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    with pytest.raises(LLMConfigurationError) as refused:
        _client().complete(f"anthropic:{MODEL}", "hi", temperature=0.2, top_p=0.5)
    message_text = str(refused.value)
    assert "provider 'anthropic' cannot honour option 'temperature'" in message_text
    assert "option 'top_p'" in message_text and "drop_unsupported = true" in message_text
    assert refused.value.attempts <= 1 and not refused.value.retryable
    assert fake_http.sent == []  # zero requests reached the server


def test_item_6_drop_unsupported_at_top_level_drops_lists_and_tells(fake_http: FakeHTTP, anthropic_key: str) -> None:
    fake_http.reply(json_body=message([text_block("ok")]))
    observer = _Observer()

    response = _client(drop_unsupported=True, plugins=[observer]).complete(
        f"anthropic:{MODEL}", "hi", temperature=0.2, max_tokens=50
    )

    assert response.dropped == ("option temperature",)
    assert [event.dropped for event in observer.events] == [("option temperature",)]
    assert (observer.events[0].provider, observer.events[0].model) == ("anthropic", MODEL)
    sent = fake_http.last().json()
    check_create_params(sent)
    assert "temperature" not in sent and sent["max_tokens"] == 50


def test_item_6_drop_unsupported_in_one_provider_table_applies_to_that_instance_only(
    fake_http: FakeHTTP, anthropic_key: str, openai_api: FakeAPI
) -> None:
    fake_http.reply(json_body=message([text_block("ok")]))
    llm = _client(providers={"anthropic": {"drop_unsupported": True}})

    assert llm.complete(f"anthropic:{MODEL}", "hi", seed=7).dropped == ("option seed",)
    with pytest.raises(LLMConfigurationError, match=r"provider 'openai' cannot honour option 'seed'.*Responses API"):
        llm.complete("openai:gpt-4o-mini", "hi", seed=7)
    assert openai_api.requests == []


def test_item_6_a_content_part_the_instance_cannot_take_is_refused_or_dropped(
    fake_http: FakeHTTP, anthropic_key: str
) -> None:
    clip = Audio.from_bytes(WAV)
    prompt = [Message.user(["Transcribe this.", clip])]
    with pytest.raises(LLMConfigurationError, match=r"provider 'anthropic' cannot take audio parts.*messages\[0\]"):
        _client().complete(f"anthropic:{MODEL}", prompt)
    assert fake_http.sent == []

    fake_http.reply(json_body=message([text_block("I cannot hear it.")]))
    response = _client(drop_unsupported=True).complete(f"anthropic:{MODEL}", prompt)
    assert response.dropped == ("audio part of messages[0]",)
    assert fake_http.last().json()["messages"] == [{"role": "user", "content": "Transcribe this."}]


def test_item_6_reasoning_effort_to_an_instance_without_it_names_both() -> None:
    """claude-code takes only max_tokens: the refusal comes before the CLI is ever started."""
    with pytest.raises(LLMConfigurationError, match=r"provider 'claude-code' cannot honour option 'reasoning_effort'"):
        _client().complete("claude-code:sonnet", "hi", reasoning_effort="high")


def test_item_6_bad_drop_unsupported_values_are_configuration_errors() -> None:
    with pytest.raises(LLMConfigurationError, match=r"providers\.anthropic\.drop_unsupported.*true or false"):
        llmplex.Client(providers={"anthropic": {"drop_unsupported": "yes"}})
    with pytest.raises(LLMConfigurationError, match="drop_unsupported"):
        llmplex.Client(drop_unsupported="sometimes")


def test_item_6_the_drop_flag_never_reaches_the_plugin_settings(fake_http: FakeHTTP, anthropic_key: str) -> None:
    """The plugin's settings forbid unknown keys: core reads drop_unsupported and keeps it away from them."""
    fake_http.reply(json_body=message([text_block("ok")]))
    llm = _client(providers={"anthropic": {"drop_unsupported": False, "timeout": 30}})
    assert llm.complete(f"anthropic:{MODEL}", "hi").dropped == ()
    assert llm.route(f"anthropic:{MODEL}").provider.drop_unsupported is False


# -- embeddings ---------------------------------------------------------------------


@pytest.fixture
def embeddings_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with respx.mock(assert_all_mocked=True) as router:
        yield router


def _embedding_reply(*vectors: object) -> dict[str, object]:
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 2, "total_tokens": 2},
    }


def test_item_6_embedding_dimensions_a_server_ignores_are_an_error_not_other_vectors(
    embeddings_api: respx.MockRouter,
) -> None:
    embeddings_api.post(f"{OPENAI_URL}/embeddings").respond(json=_embedding_reply([0.1, 0.2, 0.3, 0.4]))
    with pytest.raises(LLMServerError, match=r"asked for dimensions=2, answered vectors of 4 dimensions"):
        _client().embed("openai:text-embedding-3-small", "hi", dimensions=2)


def test_item_6_embedding_vectors_of_mixed_lengths_are_refused(embeddings_api: respx.MockRouter) -> None:
    embeddings_api.post(f"{OPENAI_URL}/embeddings").respond(json=_embedding_reply([0.1, 0.2], [0.1, 0.2, 0.3]))
    with pytest.raises(LLMServerError, match=r"vectors of 2, 3 dimensions"):
        _client().embed("openai:text-embedding-3-small", ["a", "b"])


def test_item_6_embedding_dimensions_to_a_provider_without_them_are_refused_before_sending() -> None:
    """llmplex-llamacpp's embedding models have one size: dimensions= is refused before any model is loaded."""
    with pytest.raises(LLMConfigurationError, match=r"provider 'llamacpp' cannot shorten embeddings"):
        _client().embed("llamacpp:all-minilm-l6-v2", "hi", dimensions=8)


def test_item_6_embedding_encoding_is_read_as_documented_or_refused(embeddings_api: respx.MockRouter) -> None:
    packed = base64.b64encode(struct.pack("<3f", 0.5, -1.0, 2.0)).decode()
    route = embeddings_api.post(f"{OPENAI_URL}/embeddings")
    route.side_effect = [
        httpx.Response(200, json=_embedding_reply(packed)),
        httpx.Response(200, json=_embedding_reply("not base64 at all!")),
        httpx.Response(200, json=_embedding_reply([0.1, "x"])),
    ]
    assert _client().embed("openai:text-embedding-3-small", "hi").vectors == [[0.5, -1.0, 2.0]]
    with pytest.raises(LLMServerError, match="not base64 float32 data"):
        _client().embed("openai:text-embedding-3-small", "hi")
    with pytest.raises(LLMServerError, match="not finite numbers"):
        _client().embed("openai:text-embedding-3-small", "hi")


def test_item_6_an_encoding_argument_is_refused_not_ignored() -> None:
    with pytest.raises(LLMConfigurationError, match=r"unknown keyword arguments \['encoding'\]"):
        _client().embed("mock:embed", "hi", encoding="base64")


def test_item_6_llamacpp_refuses_reasoning_effort_before_any_server_starts(openai_api: FakeAPI) -> None:
    """llama.cpp's server would ignore a reasoning effort: refused by name before the local server is started
    (no model is loaded, nothing is sent); OpenAI's Responses API honours the same option."""
    with pytest.raises(LLMConfigurationError, match=r"provider 'llamacpp' cannot honour option 'reasoning_effort'"):
        _client().complete("llamacpp:gemma3-270m", "hi", reasoning_effort="low")

    openai_api.reply("/responses", fx.response_text("ok"))
    assert _client().complete("openai:o4-mini", "hi", reasoning_effort="high").dropped == ()
    assert openai_api.bodies[0]["reasoning"] == {"effort": "high"}


def test_item_6_tools_and_a_response_chain_the_instance_lacks_are_refused_or_dropped() -> None:
    """The test plugin's ``good:`` provider calls no tools and keeps no stored responses."""
    with pytest.raises(LLMConfigurationError, match=r"provider 'good' does not support tools.*keeps no stored"):
        _client().complete("good:m", "hi", tools=[{"name": "lookup"}], previous_response_id="resp_1")

    observer = _Observer()
    dropped = _client(drop_unsupported=True, plugins=[observer]).complete(
        "good:m", "hi", tools=[{"name": "lookup"}], tool_choice="lookup", previous_response_id="resp_1"
    )
    assert dropped.text == "HI via http://127.0.0.1:1"
    assert dropped.dropped == ("tools", "previous_response_id")
    assert [event.dropped for event in observer.events] == [("tools", "previous_response_id")]
