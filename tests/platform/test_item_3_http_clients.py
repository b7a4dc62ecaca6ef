"""Issue 14 item 3: the shared httpx clients, as a third-party plugin (the echo example) gets them.

The clients existed (issue 12): deadline-bound, async ones per event loop,
closed by ``Client.close()``/``aclose()``. What was missing: an async hook
handed the sync httpx client when a plugin gives no ``create_async_client``
(the blocking-I/O trap) is now refused with a typed error saying what to add,
and asking for an async client outside an event loop is a typed error too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

import llmplex
from llmplex.errors import LLMConfigurationError
from llmplex.http import honour_deadline
from llmplex.plugins.sdk_clients import SDKClients
from llmplex.provider import ProviderInfo, ProviderSettings
from tests.platform.site import install_providers


def _echo() -> llmplex.Client:
    return llmplex.Client(providers={"echo": {"base_url": "http://127.0.0.1:9", "api_key": "sk-echo-0123456789"}})


def test_item_3_async_hooks_never_get_a_sync_httpx_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_providers(tmp_path, monkeypatch, {"trap": "tests.platform.trap_plugin"})

    async def ask(llm: llmplex.Client) -> str:
        return (await llm.acomplete("trap:m", "hi")).text

    with llmplex.Client(throttle={"max_attempts": 1}) as llm:
        assert llm.complete("trap:m", "hi").text == "sync Client"  # the sync hooks still get it
        with pytest.raises(LLMConfigurationError, match="create_async_client") as caught:
            asyncio.run(ask(llm))
    assert "blocks the event loop" in str(caught.value)


def test_item_3_a_client_that_is_not_httpx_is_still_shared_with_async_hooks() -> None:
    """A subprocess runner or a mock backend is not the trap: it is handed to async hooks as before."""

    async def ask() -> str:
        async with llmplex.Client() as llm:
            return (await llm.acomplete("mock:echo", "shared")).text

    assert "shared" in asyncio.run(ask())


def test_item_3_an_async_client_outside_an_event_loop_is_a_typed_error() -> None:
    with _echo() as llm, pytest.raises(LLMConfigurationError, match="event loop"):
        llm.provider_client("echo", asynchronous=True)


def test_item_3_echo_clients_hold_to_the_deadline_per_loop_and_are_closed() -> None:
    llm = _echo()
    sync = llm.provider_client("echo")
    assert isinstance(sync, httpx.Client)
    hooks = list(sync.event_hooks["request"])
    assert honour_deadline(sync).event_hooks["request"] == hooks, "built by llmplex.http: the hooks are there"

    async def async_client() -> httpx.AsyncClient:
        client = llm.provider_client("echo", asynchronous=True)
        assert llm.provider_client("echo", asynchronous=True) is client, "one client per loop"
        return client  # type: ignore[no-any-return]

    first, second = asyncio.run(async_client()), asyncio.run(async_client())
    assert isinstance(first, httpx.AsyncClient)
    assert first is not second
    assert first.is_closed, "closed when asyncio.run shut its loop down"
    assert second.is_closed
    llm.close()
    assert sync.is_closed


def test_item_3_aclose_closes_the_running_loops_client() -> None:
    async def run() -> httpx.AsyncClient:
        async with _echo() as llm:
            client: httpx.AsyncClient = llm.provider_client("echo", asynchronous=True)
        assert client.is_closed
        return client

    asyncio.run(run())


def test_item_3_a_plugins_close_hook_closes_its_sync_and_async_clients() -> None:
    """``ProviderInfo.close_client`` (documented for third-party plugins) is how core closes what they built."""
    closed: list[tuple[str, object]] = []

    async def aclose(client: httpx.AsyncClient) -> None:
        closed.append(("async", client))
        await client.aclose()

    def close(client: object) -> Any:
        if isinstance(client, httpx.AsyncClient):
            return aclose(client)  # an awaitable: core awaits it on the client's loop
        closed.append(("sync", client))
        return None

    info = ProviderInfo(
        name="closing",
        create_client=lambda _: httpx.Client(),
        create_async_client=lambda _: httpx.AsyncClient(),
        close_client=close,
    )
    clients = SDKClients(info, ProviderSettings())
    sync = clients.get(asynchronous=False)

    async def run() -> object:
        client = clients.get(asynchronous=True)
        await clients.aclose()
        return client

    async_client = asyncio.run(run())
    assert closed == [("sync", sync), ("async", async_client)]
    sync.close()
