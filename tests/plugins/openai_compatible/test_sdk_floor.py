"""What llmplex-openai-compatible relies on in the openai SDK, checked at whatever SDK version is installed
(the sdk-lowest-openai_compatible env installs the floor; its wire tests are tests/providers_next/*compatible*)."""

from __future__ import annotations

from llmplex_openai_compatible.clients import create_client
from llmplex_openai_compatible.settings import SETTINGS_MODELS

from llmplex.testing import Answer, WireServer


def test_default_headers_merge_into_the_client_and_absolute_urls_are_kept() -> None:
    settings = SETTINGS_MODELS["openrouter"](api_key="k", app_url="https://app.example", headers={"X-Team": "t"})
    client = create_client(settings)
    assert client.default_headers["HTTP-Referer"] == "https://app.example"
    assert client.default_headers["X-Team"] == "t"
    with WireServer() as server:
        server.push(Answer.json(200, {"models": []}))
        assert client.get(server.url + "/api/tags", cast_to=object) == {"models": []}
        assert server.received[0].path == "/api/tags"
