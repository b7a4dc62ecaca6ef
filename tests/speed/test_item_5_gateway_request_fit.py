"""Issue 34 item 5: fitting a request to its provider reads what it needs of the provider only.

``route_fit.fit`` asked every provider's settings for ``api`` (Chat Completions or Responses), which only
OpenAI's own plugins have: on any other provider (every openai-compatible preset, the bench's stub) pydantic
raised and caught an ``AttributeError`` on every request (1.7 us). The API is now read only for the plugins
whose answer it changes; what ``fit`` does with it is unchanged.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from llmplex.gateway.apis.route_fit import fit
from llmplex.gateway.calls import CallSpec
from llmplex.provider import Capabilities
from llmplex.types import Message

WEB_SEARCH = {"type": "web_search"}


class Settings:
    """Provider settings that count how often they are asked for ``api`` (``api=None``: they have none)."""

    def __init__(self, api: str | None) -> None:
        self.asked = 0
        self._api = api

    def __getattr__(self, name: str) -> Any:
        if name == "api":
            self.asked += 1
            if self._api is not None:
                return self._api
        raise AttributeError(name)


def client(plugin: str, settings: Settings) -> Any:
    provider = SimpleNamespace(
        name="p",
        info=SimpleNamespace(name=plugin),
        settings=settings,
        capabilities_for=lambda model: Capabilities(prompt_cache=True),
    )
    route = SimpleNamespace(provider=provider, model="m", spec="p:m")
    return SimpleNamespace(route=lambda model: route, config=SimpleNamespace(drops_unsupported=lambda name: False))


def spec() -> CallSpec:
    call = CallSpec(model="p:m", messages=[Message(role="user", content="hi")])
    call.builtin_tools.append(("tools[0]", WEB_SEARCH))
    return call


def test_item_5_fit_does_not_ask_another_providers_settings_for_an_api() -> None:
    settings = Settings(api=None)
    fitted = fit(spec(), client("openai-compatible", settings), drop_hints=True)
    assert settings.asked == 0
    assert fitted.dropped == ["tools[0] (web_search: run only by OpenAI's Responses API)"]
    assert "provider_options" not in fitted.kwargs


def test_item_5_fit_still_reads_openais_api() -> None:
    settings = Settings(api="responses")
    fitted = fit(spec(), client("openai", settings), drop_hints=True)
    assert settings.asked == 1
    assert fitted.dropped == []
    assert fitted.kwargs["provider_options"] == {"tools": [WEB_SEARCH]}
    chat = Settings(api=None)  # openai's settings without an api: Chat Completions, as before
    fitted = fit(spec(), client("azure", chat), drop_hints=True)
    assert chat.asked == 1
    assert fitted.dropped == ["tools[0] (web_search: run only by OpenAI's Responses API)"]
