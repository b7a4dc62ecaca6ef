"""Issue 16 item 1: images, documents and audio in OpenAI's documented shapes, through the real SDK.

respx records the exact request bodies: Chat Completions (``image_url``, ``file``
with ``file_data`` and ``filename``, ``input_audio`` with ``format``) and the
Responses API (``input_image``, ``input_file``), each validated against the
vendored OpenAPI spec. What an API cannot take is refused before any request.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import respx

import llmplex
from llmplex import Audio, LLMConfigurationError
from llmplex.testing import media
from tests.contract import fixtures_openai as fx
from tests.contract.openapi import validate_openai
from tests.multimodal.cases import CASE_IDS, CASES, CHAT_PARTS, PROMPT, URLS, b64, data_url, filename, make
from tests.plugins.openai.conftest import API_KEY, LOCAL_PROVIDER, LOCAL_URL, OPENAI_URL, FakeAPI


def responses_part(kind: str, source: str) -> dict[str, Any]:
    """The Responses API input part expected for a case."""
    if kind == "image":
        url = URLS["image"] if source == "url" else data_url("image")
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if source == "url":
        return {"type": "input_file", "file_url": URLS["document"]}
    return {"type": "input_file", "filename": filename(source), "file_data": data_url("document")}


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as mocked:
        yield mocked


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    """``openai:`` speaks the Responses API; ``local:`` is a Chat Completions server."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    return llmplex.Client(providers={"local": LOCAL_PROVIDER}, throttle={"max_attempts": 1})


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_chat_completions_sends_the_documented_part(
    llm: llmplex.Client, router: respx.MockRouter, tmp_path: Path, kind: str, source: str
) -> None:
    api = FakeAPI(router, LOCAL_URL)
    api.reply("/chat/completions", fx.chat_completion("A cat."))
    part = make(kind, source, tmp_path)
    if (kind, source) == ("document", "url"):
        with pytest.raises(LLMConfigurationError, match=r"Chat Completions API takes a document only as bytes"):
            llm.complete("local:gpt-4o", [PROMPT, part])
        assert api.requests == [], "refused before anything was sent"
        return
    assert llm.complete("local:gpt-4o", [PROMPT, part]).text == "A cat."
    (body,) = api.bodies
    validate_openai("CreateChatCompletionRequest", body)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": PROMPT}, CHAT_PARTS[kind, source]]}
    ]


def test_item_1_chat_completions_mp3_audio_and_a_stream(llm: llmplex.Client, router: respx.MockRouter) -> None:
    api = FakeAPI(router, LOCAL_URL)
    api.stream("/chat/completions", fx.chat_stream_text(["Heard", " it."]))
    events = list(llm.stream("local:gpt-4o-audio-preview", [Audio.from_bytes(media.MP3), "Transcribe."]))
    assert events[-1].response is not None
    assert events[-1].response.text == "Heard it."
    (body,) = api.bodies
    validate_openai("CreateChatCompletionRequest", body)
    assert body["stream"] is True
    assert body["messages"][0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": b64(media.MP3), "format": "mp3"}},
        {"type": "text", "text": "Transcribe."},
    ]


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_responses_api_sends_the_documented_part(
    llm: llmplex.Client, router: respx.MockRouter, tmp_path: Path, kind: str, source: str
) -> None:
    api = FakeAPI(router, OPENAI_URL)
    api.reply("/responses", fx.response_text("A cat."))
    part = make(kind, source, tmp_path)
    if kind == "audio":
        with pytest.raises(LLMConfigurationError, match=r"provider 'openai' cannot take audio parts.*it takes: "):
            llm.complete("openai:gpt-4o", [PROMPT, part])
        assert api.requests == [], "refused before anything was sent"
        return
    assert llm.complete("openai:gpt-4o", [PROMPT, part]).text == "A cat."
    (body,) = api.bodies
    validate_openai("CreateResponse", body)
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": PROMPT}, responses_part(kind, source)],
        }
    ]


def test_item_1_a_text_conversation_is_sent_as_before(llm: llmplex.Client, router: respx.MockRouter) -> None:
    api = FakeAPI(router, LOCAL_URL)
    api.reply("/chat/completions", fx.chat_completion("Hi."))
    llm.complete("local:gpt-4o", "Hello", system="Be brief.")
    assert api.bodies[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
    ]


def test_item_1_openai_capabilities_follow_the_api(llm: llmplex.Client) -> None:
    assert llm.route("local:gpt-4o").provider.capabilities.input_parts == {"image", "document", "audio"}
    assert llm.route("openai:gpt-4o").provider.capabilities.input_parts == {"image", "document"}
