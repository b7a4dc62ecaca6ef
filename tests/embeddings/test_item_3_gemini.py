"""Issue 16 item 3: gemini embeddings through the real google-genai SDK over a fake network: the exact
``batchEmbedContents`` body (https://ai.google.dev/api/embeddings), dimensions, batches, typed errors."""

from __future__ import annotations

import asyncio
import json

import pytest

import llmplex
from llmplex import LLMAuthenticationError
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.gemini.wire import error_body

__all__ = ["fake_http"]

KEY = "AIzaSyTESTKEY_0123456789abcdefghij"
BATCH_PATH = "/models/gemini-embedding-001:batchEmbedContents"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return llmplex.Client(throttle={"max_attempts": 1})


def answer(*vectors: list[float]) -> dict[str, object]:
    return {"embeddings": [{"values": v} for v in vectors]}


def request(text: str, dimensions: int | None = None) -> dict[str, object]:
    item: dict[str, object] = {
        "model": "models/gemini-embedding-001",
        "content": {"parts": [{"text": text}], "role": "user"},
    }
    if dimensions is not None:
        item["outputDimensionality"] = dimensions
    return item


def test_item_3_gemini_sends_batch_embed_contents_and_reads_vectors(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=answer([0.1, 0.2], [0.3, 0.4]))
    result = llm.embed("gemini:", ["first", "second"], dimensions=2)
    sent = fake_http.last()
    assert (
        sent.method == "POST"
        and sent.url.startswith("https://generativelanguage.googleapis.com/")
        and sent.url.endswith(BATCH_PATH)
    )
    assert sent.headers["x-goog-api-key"] == KEY
    assert json.loads(sent.body) == {"requests": [request("first", 2), request("second", 2)]}
    assert result.vectors == [[0.1, 0.2], [0.3, 0.4]]
    assert result.provider == "gemini" and result.model == "gemini-embedding-001"


def test_item_3_gemini_batches_keep_order(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=answer([1.0], [2.0]))
    fake_http.reply(json_body=answer([3.0]))
    result = asyncio.run(llm.aembed("gemini:gemini-embedding-001", ["a", "b", "c"], batch_size=2))
    assert [json.loads(s.body) for s in fake_http.sent] == [
        {"requests": [request("a"), request("b")]},
        {"requests": [request("c")]},
    ]
    assert result.vectors == [[1.0], [2.0], [3.0]]


def test_item_3_gemini_a_rejected_key_is_typed_and_masked(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(
        400,
        json_body=error_body(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                }
            ],
        ),
    )
    with pytest.raises(LLMAuthenticationError) as caught:
        llm.embed("gemini:", "hi")
    assert KEY not in repr(caught.value.__dict__)
