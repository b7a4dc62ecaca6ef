"""Issue 16 item 4: anthropic ``GET /v1/models`` through the real SDK over a fake network, with the documented
list shape (https://docs.anthropic.com/en/api/models-list): pages followed, ids and display names kept."""

from __future__ import annotations

import pytest

import llmplex
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http

__all__ = ["fake_http"]

KEY = "sk-ant-test-0123456789abcdef"


def model(model_id: str, name: str) -> dict[str, object]:
    return {"type": "model", "id": model_id, "display_name": name, "created_at": "2025-09-29T00:00:00Z"}


def test_item_4_anthropic_lists_every_page(monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_http.reply(
        json_body={
            "data": [model("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5")],
            "has_more": True,
            "first_id": "claude-sonnet-4-5-20250929",
            "last_id": "claude-sonnet-4-5-20250929",
        }
    )
    fake_http.reply(
        json_body={
            "data": [model("claude-haiku-4-5-20251001", "Claude Haiku 4.5")],
            "has_more": False,
            "first_id": "claude-haiku-4-5-20251001",
            "last_id": "claude-haiku-4-5-20251001",
        }
    )
    models = llmplex.Client().models("anthropic")
    assert [m.id for m in models] == ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"]
    assert models[0].description == "Claude Sonnet 4.5" and models[0].provider == "anthropic"
    first, second = fake_http.sent
    assert first.method == "GET" and "/v1/models" in first.url
    assert "after_id=claude-sonnet-4-5-20250929" in second.url
    assert KEY in str(first.headers)


def test_item_4_anthropic_a_rejected_key_is_typed(monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_http.reply(
        401, json_body={"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    )
    with pytest.raises(llmplex.LLMAuthenticationError) as caught:
        llmplex.Client(throttle={"max_attempts": 1}).models("anthropic")
    assert KEY not in str(caught.value)
