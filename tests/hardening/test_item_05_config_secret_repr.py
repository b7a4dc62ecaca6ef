"""Issue 12, item 5: the config never shows a key, yet the key still reaches the SDK call.

Keys given in a config file, a keyword argument, a ``Config`` object or an
``LLMPLEX_*`` variable stay hidden in ``repr``/``str``/``model_dump`` of the
config and of the routed settings.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

import llmplex
from llmplex.config.schema import Config
from tests.hardening.echo_server import EchoServer, leaked


def new_key() -> str:
    return f"gw{secrets.token_hex(20)}"


def config_texts(config: Config) -> list[str]:
    return [
        repr(config),
        str(config),
        repr(config.model_dump()),
        str(config.model_dump()),
        repr(config.model_dump(mode="json")),
        config.model_dump_json(),
        repr(config.providers),
    ]


@pytest.fixture
def proxy() -> Iterator[EchoServer]:
    with EchoServer() as server:
        yield server


@pytest.mark.parametrize("source", ["keyword", "mapping", "config_object", "toml_file", "llmplex_env"])
def test_item_5_config_repr_and_dump_hide_the_api_key(
    source: str, isolated_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = new_key()
    table = {"api_key": key, "base_url": "http://127.0.0.1:9/v1"}
    if source == "keyword":
        client = llmplex.Client(providers={"openai": table})
    elif source == "mapping":
        client = llmplex.Client({"providers": {"openai": table}})
    elif source == "config_object":
        client = llmplex.Client(Config(providers={"openai": table}))
    elif source == "toml_file":
        path = isolated_config / "gateway.toml"
        path.write_text(f'[providers.openai]\napi_key = "{key}"\nbase_url = "http://127.0.0.1:9/v1"\n')
        client = llmplex.Client(path)
    else:
        monkeypatch.setenv("LLMPLEX_PROVIDERS__OPENAI__API_KEY", key)
        client = llmplex.Client()
    route = client.route("openai:gpt-4o-mini")
    settings = route.provider.settings
    shown = [repr(route), repr(settings), str(settings), settings.model_dump_json()]
    assert leaked(key, config_texts(client.config) + shown) == []
    assert settings.api_key.get_secret_value() == key  # type: ignore[attr-defined]


def test_item_5_nested_secrets_in_plugin_tables_are_hidden_too() -> None:
    key = new_key()
    client = llmplex.Client(
        providers={"litellm": {"completion_kwargs": {"aws_secret_access_key": key, "aws_region_name": "eu-west-1"}}}
    )
    assert leaked(key, config_texts(client.config)) == []
    assert "eu-west-1" in repr(client.config)


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "openai:gpt-4o-mini"),
        ("anthropic", "anthropic:claude-sonnet-4-5"),
        ("gemini", "gemini:gemini-2.5-flash"),
    ],
)
def test_item_5_the_hidden_key_still_reaches_the_sdk_call(provider: str, model: str, proxy: EchoServer) -> None:
    key = new_key()
    base = f"{proxy.url}/v1" if provider == "openai" else proxy.url
    client = llmplex.Client(providers={provider: {"api_key": key, "base_url": base}}, throttle={"max_attempts": 1})
    assert leaked(key, config_texts(client.config)) == []
    with pytest.raises(llmplex.LLMError):
        client.complete(model, "hi", timeout=20)
    sent = proxy.requests[-1].headers.values()  # Authorization, x-api-key or x-goog-api-key, as each SDK does
    assert key in [value.removeprefix("Bearer ") for value in sent]
