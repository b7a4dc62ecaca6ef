"""Issue 12 item 17: async SDK clients live per event loop and are closed cleanly; ``Client.close()``/``aclose()``.

A Client used across two ``asyncio.run()`` calls used to leave the first loop's connections to the garbage
collector, which printed "Event loop is closed" / "unclosed transport" noise. Each loop now gets its own async
client, closed when ``asyncio.run`` shuts that loop down; ``close()``/``aclose()`` (and ``with``/``async with``)
close the rest. The noise checks run in a fresh interpreter with ``-W error`` (every warning an error) and
captured stderr, against a local server speaking each provider's wire format.

LiteLLM is not here: it caches its own async HTTP clients across loops, out of llmplex's reach.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

import llmplex
from tests.plugins.anthropic import wire as anthropic_wire
from tests.plugins.gemini import wire as gemini_wire
from tests.support.fault_server import Fault, FaultServer

KEY = "sk-two-loops-key-0123456789"

TWO_LOOPS = """
import asyncio, gc, types
import llmplex
{prelude}
client = llmplex.Client(providers={providers!r})

async def ask():
    return (await client.acomplete({model!r}, "hi")).text

answers = [asyncio.run(ask()), asyncio.run(ask())]
del client
gc.collect()
print(answers)
"""

DEFAULT_CLIENT_TWO_LOOPS = """
import asyncio, os
import llmplex

os.environ["LLMPLEX_CONFIG"] = {config!r}
answers = [asyncio.run(llmplex.acomplete({model!r}, "hi")) for _ in range(2)]
print([answer.text for answer in answers])
"""


def _case(plugin: str, url: str) -> tuple[dict[str, Any], str, str, Fault]:
    """Provider table, model, script prelude, and the server's answer in the provider's wire format."""
    root = url.removesuffix("/v1")
    if plugin == "openai":
        return {"p": {"plugin": "openai", "base_url": url, "api": "chat", "api_key": KEY}}, "p:m", "", Fault.ok("hi!")
    if plugin == "anthropic":
        body = anthropic_wire.message([anthropic_wire.text_block("hi!")])
        return {"p": {"plugin": "anthropic", "base_url": root, "api_key": KEY}}, "p:m", "", Fault.json(200, body)
    if plugin == "gemini":
        body = gemini_wire.response([gemini_wire.text_part("hi!")])
        return {"p": {"plugin": "gemini", "base_url": root, "api_key": KEY}}, "p:m", "", Fault.json(200, body)
    prelude = (
        "from llmplex_llamacpp.server import LocalServer\n"
        f"LocalServer.for_model = lambda model, **_: types.SimpleNamespace(openai_base_url={url!r})"
    )
    return {}, "llamacpp:gemma3", prelude, Fault.ok("hi!")


def _run_strict(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter where every warning is an error; its output captured."""
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize("plugin", ["openai", "anthropic", "gemini", "llamacpp"])
def test_item_17_a_client_used_across_two_event_loops_leaves_no_noise(plugin: str) -> None:
    with FaultServer(any_path=True) as server:
        providers, model, prelude, answer = _case(plugin, server.url)
        server.default = answer
        result = _run_strict(TWO_LOOPS.format(prelude=prelude, providers=providers, model=model))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['hi!', 'hi!']"
    assert result.stderr == ""


def test_item_17_the_default_client_across_two_event_loops_leaves_no_noise_at_exit(tmp_path: Any) -> None:
    with FaultServer(default=Fault.ok("hi!")) as server:
        config = tmp_path / "llmplex.toml"
        config.write_text(f'[providers.p]\nplugin = "openai"\nbase_url = "{server.url}"\napi_key = "{KEY}"\n')
        result = _run_strict(DEFAULT_CLIENT_TWO_LOOPS.format(config=str(config), model="p:m"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['hi!', 'hi!']"
    assert result.stderr == ""


# -- close() / aclose() in process ---------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(default=Fault.ok("hi!")) as fake:
        yield fake


def _client(server: FaultServer) -> llmplex.Client:
    return llmplex.Client(providers={"p": {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": KEY}})


def test_item_17_with_closes_the_sdk_clients_and_the_client_stays_usable(server: FaultServer) -> None:
    with _client(server) as client:
        assert client.complete("p:m", "hi").text == "hi!"
        sdk = client.provider_client("p")
    assert sdk.is_closed()
    assert client.complete("p:m", "again").text == "hi!"  # a closed Client opens new connections
    assert client.provider_client("p") is not sdk
    client.close()
    client.close()  # idempotent


def test_item_17_async_with_closes_the_async_client_of_its_loop(server: FaultServer) -> None:
    async def use() -> Any:
        async with _client(server) as client:
            assert (await client.acomplete("p:m", "hi")).text == "hi!"
            sdk = client.provider_client("p", asynchronous=True)
            assert not sdk.is_closed()
        return sdk

    assert asyncio.run(use()).is_closed()


def test_item_17_each_event_loop_closes_its_own_async_client_when_it_shuts_down(server: FaultServer) -> None:
    client = _client(server)

    async def use() -> Any:
        await client.acomplete("p:m", "hi")
        return client.provider_client("p", asynchronous=True)

    first = asyncio.run(use())
    assert first.is_closed()  # asyncio.run shut its loop down: the loop's client went with it
    second = asyncio.run(use())
    assert second is not first and second.is_closed()


def test_item_17_close_reaches_async_clients_on_the_bridge_loop(server: FaultServer) -> None:
    """A sync call to an async-only path runs on core's background loop; close() closes that loop's client."""
    client = _client(server)
    bridge_client: list[Any] = []

    async def on_bridge() -> None:
        await client.acomplete("p:m", "hi")
        bridge_client.append(client.provider_client("p", asynchronous=True))

    from llmplex.engine.bridge import run_on_loop

    run_on_loop(on_bridge)
    assert not bridge_client[0].is_closed()
    client.close()
    assert bridge_client[0].is_closed()


def test_item_17_an_async_client_outside_an_event_loop_is_a_typed_error(server: FaultServer) -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match="event loop"):
        _client(server).provider_client("p", asynchronous=True)
