"""Router: prefixes, aliases, default provider, instances from config, unknown prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest

import llmplex
from llmplex import LLMConfigurationError


def test_prefix_routes_to_provider_and_model(client: llmplex.Client) -> None:
    route = client.route("mock:some-model")
    assert (route.provider.name, route.model, route.spec) == ("mock", "some-model", "mock:some-model")


def test_model_may_contain_colons_after_the_prefix(client: llmplex.Client) -> None:
    assert client.route("mock:org/model:v2").model == "org/model:v2"


def test_config_alias_and_provider_model_alias() -> None:
    client = llmplex.Client(aliases={"fast": "good:small", "quick": "fast"})
    route = client.route("quick")
    assert (route.provider.name, route.model) == ("good", "good-small-v1")


def test_alias_loop_is_reported() -> None:
    client = llmplex.Client(aliases={"a": "b", "b": "a"})
    with pytest.raises(LLMConfigurationError, match="loop: a -> b -> a"):
        client.route("a")


def test_bare_name_goes_to_default_provider() -> None:
    assert llmplex.Client(default_provider="mock").route("echo").spec == "mock:echo"


def test_bare_name_without_default_provider_explains_fix(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match=r"no provider prefix: write it as 'provider:gpt'"):
        client.route("gpt")


@pytest.mark.parametrize("model", ["", "   ", ":model"])  # "mock:" alone is the mock's default model (issue 13)
def test_incomplete_model_strings_are_typed_errors(client: llmplex.Client, model: str) -> None:
    with pytest.raises(LLMConfigurationError, match="model"):
        client.complete(model, "hi")


def test_none_model_uses_configured_default() -> None:
    client = llmplex.Client(default_model="mock:echo")
    assert client.complete(None, "hello").text == "hello"


def test_unknown_prefix_lists_installed_and_install_command(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError) as info:
        client.route("nosuch:model")
    assert "installed providers:" in str(info.value) and "mock" in str(info.value)
    assert "pip install" not in str(info.value)


@pytest.mark.parametrize("prefix", ["openai", "anthropic", "gemini", "litellm", "claude-code", "llamacpp"])
def test_known_provider_not_installed_names_exact_pip_command(client: llmplex.Client, prefix: str) -> None:
    client.host.entries().pop(prefix, None)  # as on a machine where the distribution is not installed
    with pytest.raises(LLMConfigurationError, match=f"llmplex-{prefix}: .* pip install ./plugins/[a-z_]+$") as info:
        client.route(f"{prefix}:model")
    folder = str(info.value).rsplit("./", 1)[1]
    assert (Path(__file__).parents[2] / folder / "pyproject.toml").is_file(), "the folder named is in the repository"


def test_config_instances_share_one_plugin_with_own_settings() -> None:
    client = llmplex.Client(
        providers={
            "one": {"plugin": "good", "base_url": "http://127.0.0.1:1111", "shout": False},
            "two": {"plugin": "good", "base_url": "http://127.0.0.1:2222"},
        }
    )
    assert client.complete("one:m", "hi").text == "hi via http://127.0.0.1:1111"
    assert client.complete("two:m", "hi").text == "HI via http://127.0.0.1:2222"
    one, two = client.router.instance("one"), client.router.instance("two")
    assert one.plugin is two.plugin and one.settings is not two.settings


def test_instance_settings_are_validated_by_the_plugin_model() -> None:
    client = llmplex.Client(providers={"one": {"plugin": "good", "shout": "loud"}})
    with pytest.raises(LLMConfigurationError, match=r"key 'providers\.one\.shout'.*found the string \"loud\""):
        client.route("one:m")


def test_pipeline_hooks_only_reach_the_resolved_provider() -> None:
    client = llmplex.Client()
    client.route("good:m")
    client.route("mock:m")
    hooks = client.router.instance("mock").hooks
    plugins = {impl.plugin_name for impl in hooks.format.get_hookimpls()}
    assert "llmplex.providers:good" not in plugins
    assert "llmplex.providers:mock" in plugins


def test_bound_hooks_are_cached_per_plugin(client: llmplex.Client) -> None:
    client.route("mock:m")
    assert client.host.hooks("mock") is client.host.hooks("mock")


def test_a_provider_loaded_later_never_sees_an_earlier_providers_payloads(client: llmplex.Client) -> None:
    assert client.complete("mock:echo", "first").text == "first"
    client.complete("good:m", "load another provider plugin")
    assert client.complete("mock:echo", "still mock").text == "still mock"
    assert client.provider_client("mock").calls[-1]["messages"][-1]["content"] == "still mock"


def test_async_clients_are_kept_per_event_loop() -> None:
    import asyncio

    client = llmplex.Client(providers={"loopy": {"plugin": "good"}})
    instance = client.router.instance("loopy")
    made: list[object] = []
    info = instance.info
    object.__setattr__(info, "create_async_client", lambda settings: made.append(object()) or made[-1])
    try:

        async def get() -> object:
            return instance.client(asynchronous=True)

        async def twice() -> tuple[object, object]:
            return await get(), await get()

        a, b = asyncio.run(twice())
        c = asyncio.run(get())
    finally:
        object.__setattr__(info, "create_async_client", None)
    assert a is b
    assert c is not a
    assert len(made) == 2
