"""Fakes of the providers' HTTP APIs for the conversation-state tests (issue 21 items 4-6)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.openai.conftest import API_KEY, OPENAI_URL, FakeAPI

__all__ = ["FakeHTTP", "fake_http", "openai_api"]

ANTHROPIC_KEY = "sk-ant-state-test-0123456789"


@pytest.fixture
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """``ANTHROPIC_API_KEY`` set for one test."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    return ANTHROPIC_KEY


@pytest.fixture
def openai_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    """``https://api.openai.com/v1`` faked with respx under the real SDK (replies checked against the OpenAPI
    spec), with ``OPENAI_API_KEY`` set."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        yield FakeAPI(router, OPENAI_URL)
