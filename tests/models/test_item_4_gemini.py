"""Issue 16 item 4: gemini ``models.list`` through the real SDK over a fake network, with the documented
``ListModelsResponse`` (https://ai.google.dev/api/models#method:-models.list): token limits, methods, pages."""

from __future__ import annotations

import pytest

import llmplex
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http

__all__ = ["fake_http"]

KEY = "AIzaSyTESTKEY_0123456789abcdefghij"

FLASH = {
    "name": "models/gemini-2.5-flash",
    "version": "001",
    "displayName": "Gemini 2.5 Flash",
    "inputTokenLimit": 1048576,
    "outputTokenLimit": 65536,
    "supportedGenerationMethods": ["generateContent", "countTokens"],
    "thinking": True,
}
EMBEDDING = {
    "name": "models/gemini-embedding-001",
    "version": "001",
    "displayName": "Gemini Embedding 001",
    "inputTokenLimit": 2048,
    "outputTokenLimit": 1,
    "supportedGenerationMethods": ["embedContent"],
}


def test_item_4_gemini_lists_models_with_limits_across_pages(
    monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    fake_http.reply(json_body={"models": [FLASH], "nextPageToken": "page-2"})
    fake_http.reply(json_body={"models": [EMBEDDING]})
    client = llmplex.Client()
    models = client.models("gemini")
    assert client.models("gemini") == models and len(fake_http.sent) == 2
    assert all(s.method == "GET" and "/models" in s.url for s in fake_http.sent)
    assert "pageToken=page-2" in fake_http.sent[1].url
    flash, embedding = models
    assert (flash.id, flash.context_window, flash.max_output_tokens) == ("gemini-2.5-flash", 1048576, 65536)
    assert flash.features == ("chat", "count_tokens", "reasoning") and flash.provider == "gemini"
    assert flash.description == "Gemini 2.5 Flash"
    assert embedding.id == "gemini-embedding-001" and embedding.features == ("embeddings",)


def test_item_4_gemini_without_a_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(llmplex.LLMConfigurationError, match="GEMINI_API_KEY"):
        llmplex.Client().models("gemini")
