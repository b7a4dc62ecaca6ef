"""Issue 16 item 4: openai ``GET /models`` under the real SDK (respx), the reply validated against the spec."""

from __future__ import annotations

import httpx
import pytest
import respx

import llmplex
from llmplex import LLMAuthenticationError
from llmplex.testing import FakeError
from tests.conformance.openai_wire import error_body
from tests.contract.openapi import validate_openai
from tests.plugins.openai.conftest import API_KEY, OPENAI_URL

LISTED = {
    "object": "list",
    "data": [
        {"id": "text-embedding-3-small", "object": "model", "created": 1705948997, "owned_by": "system"},
        {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
    ],
}


def test_item_4_openai_lists_model_ids_once_per_client(monkeypatch: pytest.MonkeyPatch) -> None:
    validate_openai("ListModelsResponse", LISTED)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(OPENAI_URL + "/models").mock(return_value=httpx.Response(200, json=LISTED))
        client = llmplex.Client()
        models = client.models("openai")
        assert client.models("openai") == models
    assert route.call_count == 1
    assert [m.id for m in models] == ["gpt-4o-mini", "text-embedding-3-small"]
    assert all(m.provider == "openai" for m in models) and models[0].description == "owned by system"


def test_item_4_openai_a_rejected_key_is_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    body = error_body(FakeError("authentication", "Incorrect API key"))
    with respx.mock(assert_all_mocked=True) as router:
        router.get(OPENAI_URL + "/models").mock(return_value=httpx.Response(401, json=body))
        with pytest.raises(LLMAuthenticationError) as caught:
            llmplex.Client().models("openai")
    assert API_KEY not in str(caught.value) and caught.value.provider == "openai"
