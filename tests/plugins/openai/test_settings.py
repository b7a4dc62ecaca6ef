"""Settings of ``openai:`` and of config instances: keys, API choice, timeouts, problems."""

from __future__ import annotations

import pytest
from llmplex_openai.clients import request_timeout
from llmplex_openai.settings import OpenAISettings, is_local_url

import llmplex
from tests.contract import fixtures_openai as fx
from tests.plugins.openai.conftest import API_KEY, LOCAL_URL, FakeAPI


def test_openai_prefix_takes_its_key_from_the_environment_and_defaults_to_responses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    settings = llmplex.Client().router.instance("openai").settings

    assert isinstance(settings, OpenAISettings)
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == API_KEY
    assert API_KEY not in repr(settings)
    assert settings.effective_api == "responses"
    assert settings.problems() == []


def test_config_instance_gets_no_environment_key_and_defaults_to_chat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    llm = llmplex.Client(providers={"local": {"plugin": "openai", "base_url": LOCAL_URL}})
    settings = llm.router.instance("local").settings

    assert isinstance(settings, OpenAISettings)
    assert settings.api_key is None
    assert settings.effective_api == "chat"
    assert settings.problems() == []


def test_a_missing_key_is_a_problem_for_openai_and_remote_servers_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    assert OpenAISettings().problems()
    assert OpenAISettings(base_url="https://api.together.xyz/v1").problems()
    assert OpenAISettings(base_url="http://localhost:11434/v1").problems() == []
    assert OpenAISettings(base_url="http://127.0.0.1:8080/v1").problems() == []
    assert OpenAISettings(base_url="https://api.together.xyz/v1", api_key="k").problems() == []  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.5.5.5/v1", True),
        ("http://[::1]:8080/v1", True),
        ("http://localhost/v1", True),
        ("http://0.0.0.0:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5/v1", False),
        ("https://example.com/v1", False),
    ],
)
def test_local_urls(url: str, local: bool) -> None:
    assert is_local_url(url) is local


def test_chat_instances_declare_no_response_chains(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    llm = llmplex.Client(providers={"local": {"plugin": "openai", "base_url": LOCAL_URL}})

    assert llm.router.instance("openai").capabilities.response_chains
    assert llm.router.instance("openai").capabilities.delete_response
    assert not llm.router.instance("local").capabilities.response_chains
    assert not llm.router.instance("local").capabilities.delete_response
    assert llm.router.instance("local").capabilities.native_structured_output


def test_explicit_api_wins_over_the_default() -> None:
    assert OpenAISettings(api="chat").effective_api == "chat"
    assert OpenAISettings(base_url=LOCAL_URL, api="responses").effective_api == "responses"


def test_bad_settings_are_configuration_errors_naming_the_key() -> None:
    llm = llmplex.Client(providers={"local": {"plugin": "openai", "base_url": LOCAL_URL, "api": "completions"}})

    with pytest.raises(llmplex.LLMConfigurationError, match="api"):
        llm.router.instance("local")


@pytest.mark.parametrize(
    ("left", "configured", "expected"), [(None, None, None), (5.0, None, 5.0), (None, 30.0, 30.0), (5.0, 2.0, 2.0)]
)
def test_request_timeout_is_the_shorter_of_deadline_and_setting(
    left: float | None, configured: float | None, expected: float | None
) -> None:
    assert request_timeout(left, configured) == expected


def test_configured_timeout_reaches_the_sdk_client() -> None:
    llm = llmplex.Client(providers={"local": {"plugin": "openai", "base_url": LOCAL_URL, "timeout": 12.5}})

    assert llm.provider_client("local").timeout == 12.5


def test_deadline_reaches_the_request_as_its_timeout(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply("/chat/completions", fx.chat_completion())

    llm.complete("local:m", "hi", timeout=7)

    timeout = local_api.requests[0].extensions["timeout"]
    assert 0 < timeout["read"] <= 7
