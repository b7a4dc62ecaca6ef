"""Issue 16 item 1: images, documents and audio as Gemini ``inline_data`` / ``file_data``, through the real SDK.

The formatted payload validates as the SDK's ``types.Content``; the fake network
records what the SDK put on the wire, whose base64 must decode to the file's bytes.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
from llmplex_gemini.request import format_request
from llmplex_gemini.settings import GeminiSettings

import llmplex
from llmplex.testing import media
from llmplex.types import Message, Request
from tests.multimodal.cases import CASE_IDS, CASES, FILES, PROMPT, URLS, make
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.gemini.wire import MODEL, check_payload, check_wire_body, response, text_part

__all__ = ["fake_http"]

MIME = {"image": "image/png", "document": "application/pdf", "audio": "audio/wav"}


def wire_part(kind: str, source: str) -> dict[str, Any]:
    """The part as the SDK sends it (its own key spelling), with the bytes decoded."""
    if source == "url":
        return {"fileData": {"file_uri": URLS[kind], "mime_type": MIME[kind]}}
    return {"inlineData": {"mime_type": MIME[kind], "data": FILES[kind][1]}}


def decoded(part: dict[str, Any]) -> dict[str, Any]:
    """``part`` with inline base64 data (the SDK writes the URL-safe alphabet) decoded."""
    inline = part.get("inlineData")
    if inline is None:
        return part
    return {"inlineData": {**inline, "data": base64.urlsafe_b64decode(inline["data"])}}


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_multimodal_0123456789")
    return llmplex.Client(throttle={"max_attempts": 1})


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_generate_content_sends_inline_or_file_data(
    llm: llmplex.Client, fake_http: FakeHTTP, tmp_path: Path, kind: str, source: str
) -> None:
    part = make(kind, source, tmp_path)
    payload = format_request(Request(model=MODEL, messages=(Message.user([PROMPT, part]),)), GeminiSettings())
    check_payload(payload)
    expected = (
        {"file_data": {"file_uri": URLS[kind], "mime_type": MIME[kind]}}
        if source == "url"
        else {"inline_data": {"mime_type": MIME[kind], "data": FILES[kind][1]}}
    )
    assert payload["contents"] == [{"role": "user", "parts": [{"text": PROMPT}, expected]}]

    fake_http.reply(json_body=response([text_part("A cat.")]))
    assert llm.complete(f"gemini:{MODEL}", [PROMPT, part]).text == "A cat."
    body = fake_http.last().json()
    check_wire_body(body)
    (content,) = body["contents"]
    assert content["role"] == "user"
    assert [decoded(p) for p in content["parts"]] == [{"text": PROMPT}, wire_part(kind, source)]


def test_item_1_mp3_goes_by_gemini_s_documented_mime_type(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=response([text_part("Heard.")]))
    answer = asyncio.run(llm.acomplete(f"gemini:{MODEL}", ["Transcribe.", llmplex.Audio.from_bytes(media.MP3)]))
    assert answer.text == "Heard."
    parts = fake_http.last().json()["contents"][0]["parts"]
    assert decoded(parts[1]) == {"inlineData": {"mime_type": "audio/mp3", "data": media.MP3}}
