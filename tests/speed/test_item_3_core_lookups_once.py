"""Issue 34 item 3: core's call path looks each thing up once.

- an attempt works out its adapted request once (``Pipeline._adapt``), for its payload and its parse alike;
- an async SDK client is found with one ``asyncio.get_running_loop()``, not one to check and one to find it;
- a call without keyword arguments has no tools: ``Client._mcp_call`` (MCP servers among the tools) is not asked.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import llmplex
from llmplex.client import Client
from llmplex.engine.pipeline import Pipeline
from llmplex.errors import LLMConfigurationError
from llmplex.plugins.sdk_clients import SDKClients
from llmplex.provider import ProviderInfo, ProviderSettings
from llmplex.reliability.per_loop import PerLoop
from llmplex.types import Tool


def _counted(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(cls, name)

    def spy(self: object, *args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return calls


def test_item_3_core_an_attempt_adapts_its_request_once(monkeypatch: pytest.MonkeyPatch) -> None:
    adapted = _counted(monkeypatch, Pipeline, "_adapt")
    with llmplex.Client() as llm:
        assert llm.complete("mock:echo", "sync").text.endswith("sync")
        assert len(adapted) == 1
        assert asyncio.run(llm.acomplete("mock:echo", "async")).text.endswith("async")
        assert len(adapted) == 2
        assert [event.type for event in llm.stream("mock:echo", "stream")][-1] == "response"
        assert len(adapted) == 3

        async def astream() -> list[str]:
            return [event.type async for event in llm.astream("mock:echo", "astream")]

        assert asyncio.run(astream())[-1] == "response"
        assert len(adapted) == 4


def _info(**factories: Any) -> ProviderInfo:
    return ProviderInfo(name="fake", **factories)


def test_item_3_core_an_async_client_is_found_with_one_running_loop_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    clients = SDKClients(_info(create_async_client=lambda settings: object()), ProviderSettings())
    lookups: list[asyncio.AbstractEventLoop] = []

    async def lookup() -> tuple[object, object]:
        first = clients.get(True)
        real = asyncio.get_running_loop

        def counted() -> asyncio.AbstractEventLoop:
            lookups.append(real())
            return lookups[-1]

        monkeypatch.setattr(asyncio, "get_running_loop", counted)
        try:
            again = clients.get(True)
        finally:
            monkeypatch.setattr(asyncio, "get_running_loop", real)
        return first, again

    first, again = asyncio.run(lookup())
    assert again is first, "one client per loop"
    assert len(lookups) == 1


def test_item_3_core_an_async_client_outside_a_loop_is_still_the_typed_error() -> None:
    clients = SDKClients(_info(create_async_client=lambda settings: object()), ProviderSettings())
    with pytest.raises(LLMConfigurationError, match="event loop"):
        clients.get(True)


def test_item_3_core_per_loop_finds_the_running_loop_itself_when_not_given() -> None:
    made: list[object] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    async def close(value: object) -> None:
        return None

    objects = PerLoop(make, close)

    async def both() -> tuple[object, object]:
        return objects.get(), objects.get(asyncio.get_running_loop())

    found, given = asyncio.run(both())
    assert found is given is made[0]


def test_item_3_core_a_call_without_keyword_arguments_asks_nothing_about_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _counted(monkeypatch, Client, "_mcp_call")

    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    with llmplex.Client() as llm:
        assert llm.complete("mock:echo", "plain").text.endswith("plain")
        assert asyncio.run(llm.acomplete("mock:echo", "plain")).text.endswith("plain")
        assert list(llm.stream("mock:echo", "plain"))[-1].type == "response"
        assert asyncio.run(_drain(llm.astream("mock:echo", "plain")))[-1] == "response"
        assert asked == []
        assert llm.complete("mock:echo", "sampled", temperature=0.5).text.endswith("sampled")
        assert llm.complete("mock:echo", "with a tool", tools=[Tool.from_function(double)]).text
    assert len(asked) == 2, "asked when keyword arguments are given"


async def _drain(events: Any) -> list[str]:
    return [event.type async for event in events]
