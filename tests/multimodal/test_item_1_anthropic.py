"""Issue 16 item 1: images and PDF documents in Anthropic's documented blocks, through the real SDK.

The fake network records the exact body; it validates as the SDK's
``MessageCreateParams`` (``ImageBlockParam``, ``DocumentBlockParam`` with a
base64 or URL source). Audio, which the Messages API does not take, is refused
before any request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.testing import media
from tests.multimodal.cases import CASE_IDS, CASES, PROMPT, URLS, b64, make
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.anthropic.wire import MODEL, check_create_params, message, text_block

__all__ = ["fake_http"]


def block(kind: str, source: str) -> dict[str, Any]:
    """The content block expected for a case."""
    if source == "url":
        return {"type": kind, "source": {"type": "url", "url": URLS[kind]}}
    media_type, data = ("image/png", media.PNG) if kind == "image" else ("application/pdf", media.PDF)
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": b64(data)}}


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-multimodal-0123")
    return llmplex.Client(throttle={"max_attempts": 1})


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_messages_api_sends_the_documented_block(
    llm: llmplex.Client, fake_http: FakeHTTP, tmp_path: Path, kind: str, source: str
) -> None:
    part = make(kind, source, tmp_path)
    if kind == "audio":
        with pytest.raises(LLMConfigurationError, match=r"provider 'anthropic' cannot take audio parts"):
            llm.complete(f"anthropic:{MODEL}", [PROMPT, part])
        assert fake_http.sent == [], "refused before anything was sent"
        return
    fake_http.reply(json_body=message([text_block("A cat.")]))
    assert llm.complete(f"anthropic:{MODEL}", [PROMPT, part]).text == "A cat."
    body = fake_http.last().json()
    check_create_params(body)
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": PROMPT}, block(kind, source)]}]


def test_item_1_parts_keep_their_order_next_to_a_system_prompt(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=message([text_block("Both.")]))
    image = llmplex.Image.from_bytes(media.GIF)
    document = llmplex.Document.from_url(URLS["document"])
    llm.complete(f"anthropic:{MODEL}", [image, "then", document], system="Be brief.")
    body = fake_http.last().json()
    check_create_params(body)
    assert body["system"] == "Be brief."
    assert body["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": b64(media.GIF)}},
        {"type": "text", "text": "then"},
        block("document", "url"),
    ]
