"""Issue 12, item 7: credentials inside a ``base_url`` are sent properly and shown nowhere.

Some gateways take the key as a query parameter (``?key=...``) or in the URL's
user info (``https://user:pass@host``). The query must reach the server as a
query parameter (the SDKs used to glue paths after it: ``/v1?key=.../chat/completions``),
and neither the key nor the password may show in reprs, the config, ``llmplex
providers``, httpx's own request logs or errors.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

import llmplex
from tests.hardening.echo_server import EchoServer, capture_logs, exception_texts, leaked, proxy, sdks_imported

__all__ = ["proxy", "sdks_imported"]  # echo_server's fixtures: the proxy, and the SDKs imported first

PROVIDERS = ("openai", "anthropic", "gemini", "litellm")
MODELS = {
    "openai": "openai:gpt-4o-mini",
    "anthropic": "anthropic:claude-sonnet-4-5",
    "gemini": "gemini:gemini-2.5-flash",
    "litellm": "litellm:openai/gpt-4o-mini",
}
PATHS = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "litellm": "/v1/chat/completions",
}


def new_secret() -> str:
    return f"gw{secrets.token_hex(20)}"


def table(provider: str, url: str) -> dict[str, Any]:
    """The provider's settings with ``url`` as its endpoint (``api_base`` for LiteLLM)."""
    return {"api_base": url} if provider == "litellm" else {"base_url": url}


def root(provider: str, proxy: EchoServer) -> str:
    return f"{proxy.url}/v1" if provider in ("openai", "litellm") else proxy.url


def failing_call(client: llmplex.Client, provider: str) -> llmplex.LLMError:
    with pytest.raises(llmplex.LLMError) as caught:
        client.complete(MODELS[provider], "hi", timeout=20)
    return caught.value


@pytest.mark.parametrize("provider", ["openai", "anthropic", "litellm"])  # google-genai keeps the query itself
def test_item_7_a_query_in_base_url_is_sent_as_query_parameters(provider: str, proxy: EchoServer) -> None:
    key = new_secret()
    url = f"{root(provider, proxy)}?key={key}&api-version=2024-06-01"
    client = llmplex.Client(providers={provider: {**table(provider, url), "api_key": new_secret()}})
    failing_call(client, provider)
    sent = proxy.requests[-1]
    assert sent.path.endswith(PATHS[provider]) and "key" not in sent.path
    query = parse_qs(sent.query)
    assert query["key"] == [key]
    assert query["api-version"] == ["2024-06-01"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_item_7_url_credentials_are_masked_in_reprs_config_logs_and_errors(provider: str, proxy: EchoServer) -> None:
    key, password = new_secret(), new_secret()
    with_user = root(provider, proxy).replace("http://", f"http://gateway-user:{password}@")
    url = f"{with_user}?key={key}&api-version=7"
    provider_table = {**table(provider, url), "api_key": new_secret()}
    client = llmplex.Client(providers={provider: provider_table}, throttle={"max_attempts": 1})
    with capture_logs() as lines:
        error = failing_call(client, provider)
    route = client.route(MODELS[provider])
    shown = [repr(route), str(route.provider.settings), repr(client.config), str(client.config.model_dump())]
    assert proxy.requests, "the request never reached the proxy"
    assert any("HTTP Request" in line for line in lines), "httpx logged no request line"
    for secret in (key, password):
        assert leaked(secret, shown) == []
        assert leaked(secret, lines) == []
        assert leaked(secret, exception_texts(error)) == []
    assert "api-version=7" in repr(route)  # only credentials are masked, not the whole URL


def shown_pieces(secret: str, output: str) -> list[str]:
    """Pieces (12 characters or more) of ``secret`` in ``output``: a table cell may fold a key over lines."""
    return [secret[i : i + 12] for i in range(len(secret) - 11) if secret[i : i + 12] in output]


def run_cli(tmp_path: Path, config: str, *args: str) -> str:
    path = tmp_path / "gateways.toml"
    path.write_text(config, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "llmplex", "--config", str(path), "--debug", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    return done.stdout + done.stderr


def test_item_7_llmplex_providers_masks_url_credentials(tmp_path: Path) -> None:
    key, password, token = new_secret(), new_secret(), new_secret()
    config = (
        "[providers.gw]\n"
        'plugin = "openai"\n'
        f'base_url = "https://gateway-user:{password}@gateway.example/v1?key={key}&api-version=7"\n'
        "[providers.gw2]\n"
        'plugin = "anthropic"\n'
        f'base_url = "https://gateway.example/anthropic?access_token={token}"\n'
    )
    listing = run_cli(tmp_path, config, "providers")
    checked = run_cli(tmp_path, config, "providers", "--check")
    assert "gw2" in checked and "***" in checked
    for secret in (key, password, token):
        assert shown_pieces(secret, listing + checked) == []


def test_item_7_litellm_refuses_a_query_it_cannot_send(proxy: EchoServer) -> None:
    """LiteLLM's own routes (here Anthropic's) would glue paths after the query: a typed error says so."""
    key = new_secret()
    client = llmplex.Client(
        providers={"litellm": {"api_base": f"{proxy.url}?key={key}", "api_key": new_secret()}},
        throttle={"max_attempts": 1},
    )
    with pytest.raises(llmplex.LLMConfigurationError, match="api_base has query parameters") as caught:
        client.complete("litellm:anthropic/claude-sonnet-4-5", "hi", timeout=20)
    assert proxy.requests == []
    assert leaked(key, exception_texts(caught.value)) == []
