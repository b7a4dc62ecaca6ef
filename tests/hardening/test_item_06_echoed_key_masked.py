"""Issue 12, item 6: a proxy echoing the key in its 401 body and headers leaks it nowhere.

The key is a realistic one with no well-known shape (no ``sk-`` prefix), so only
core's knowledge of the configured secret can mask it. Each provider is driven
through its official SDK against the echoing proxy on 127.0.0.1; the whole
exception chain, what each exception carries (SDK response, headers, body,
request), the formatted traceback, every log record at DEBUG and every event
are scanned, and so is the CLI's ``--debug`` output.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.hookspecs import hookimpl
from tests.hardening.echo_server import EchoServer, capture_logs, exception_texts, leaked, proxy, sdks_imported

__all__ = ["proxy", "sdks_imported"]  # echo_server's fixtures: the proxy, and the SDKs imported first

PROVIDERS = ("openai", "anthropic", "gemini", "litellm")
MODELS = {
    "openai": "openai:gpt-4o-mini",
    "anthropic": "anthropic:claude-sonnet-4-5",
    "gemini": "gemini:gemini-2.5-flash",
    "litellm": "litellm:openai/gpt-4o-mini",
}


def new_key() -> str:
    """A fresh gateway-style key per test: never registered by an earlier test, no ``sk-`` shape."""
    return f"gw{secrets.token_hex(20)}"


def provider_table(provider: str, root: str, key: str) -> dict[str, Any]:
    if provider == "openai":
        return {"api_key": key, "base_url": f"{root}/v1"}
    if provider == "litellm":
        return {"api_key": key, "api_base": f"{root}/v1"}
    return {"api_key": key, "base_url": root}


class Events:
    """An observer keeping the repr and the log form of every event."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        self.texts += [repr(event), repr(event.as_dict()) if hasattr(event, "as_dict") else ""]


def failing_call(provider: str, proxy: EchoServer, key: str, *, asynchronous: bool = False) -> tuple[Exception, Events]:
    events = Events()
    client = llmplex.Client(
        providers={provider: provider_table(provider, proxy.url, key)},
        throttle={"max_attempts": 1},
        plugins=[events],
    )
    call = (
        (lambda: asyncio.run(client.acomplete(MODELS[provider], "hi", timeout=20)))
        if asynchronous
        else (lambda: client.complete(MODELS[provider], "hi", timeout=20))
    )
    with pytest.raises(llmplex.LLMError) as caught:
        call()
    assert proxy.requests, "the request never reached the proxy"
    echoed = [r for r in proxy.requests if key in " ".join(r.headers.values()) + r.query]
    assert echoed, "the proxy did not receive the key, so it could not echo it"
    return caught.value, events


@pytest.mark.parametrize("provider", PROVIDERS)
def test_item_6_echoed_key_is_masked_in_the_whole_exception_chain(provider: str, proxy: EchoServer) -> None:
    key = new_key()
    error, _ = failing_call(provider, proxy, key)
    assert leaked(key, exception_texts(error)) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_item_6_echoed_key_is_masked_in_async_errors(provider: str, proxy: EchoServer) -> None:
    key = new_key()
    error, _ = failing_call(provider, proxy, key, asynchronous=True)
    assert leaked(key, exception_texts(error)) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_item_6_echoed_key_is_masked_in_debug_logs_and_events(provider: str, proxy: EchoServer) -> None:
    key = new_key()
    with capture_logs() as lines:
        error, events = failing_call(provider, proxy, key)
    assert lines, "nothing was logged: the capture is not working"
    assert leaked(key, lines) == []
    assert leaked(key, events.texts) == []
    assert events.texts, "no event was observed"
    assert leaked(key, exception_texts(error)) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_item_6_echoed_key_is_masked_in_cli_debug_output(provider: str, proxy: EchoServer, tmp_path: Path) -> None:
    key = new_key()
    table = provider_table(provider, proxy.url, key)
    lines = [f"[providers.{provider}]", *(f'{name} = "{value}"' for name, value in table.items())]
    lines += ["[throttle]", "max_attempts = 1"]
    config = tmp_path / "config.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")}
    env["LITELLM_LOG"] = "DEBUG"
    env["OPENAI_LOG"] = "debug"
    env["ANTHROPIC_LOG"] = "debug"
    done = subprocess.run(
        [sys.executable, "-m", "llmplex", "--config", str(config), "--debug", "complete", "-m", MODELS[provider], "hi"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode != 0
    assert "Traceback" in done.stderr, done.stderr[-2000:]
    assert proxy.requests, "the request never reached the proxy"
    assert leaked(key, [done.stdout, done.stderr]) == []
