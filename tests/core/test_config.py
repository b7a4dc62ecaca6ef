"""Config sources and precedence, and errors that name the file, key, expectation and finding."""

from __future__ import annotations

from pathlib import Path

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.config.loader import load_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def user_file(isolated_config: Path) -> Path:
    return isolated_config / "xdg" / "llmplex" / "config.toml"


def test_defaults_without_any_source() -> None:
    config, _ = load_config()
    assert config.default_model == "llamacpp:qwen2.5-coder-1.5b"
    assert config.throttle.max_attempts == 5 and config.throttle.base_delay == 0.5
    assert config.enabled is None and config.disabled == ()


def test_precedence_user_project_explicit_env_kwargs(
    user_file: Path, isolated_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(user_file, 'default_model = "mock:user"\n[aliases]\nu = "mock:u"\n')
    write(isolated_config / "llmplex.toml", 'default_model = "mock:project"\n[aliases]\np = "mock:p"\n')
    assert load_config()[0].default_model == "mock:project"
    explicit = write(isolated_config / "explicit.toml", 'default_model = "mock:explicit"\n')
    monkeypatch.setenv("LLMPLEX_CONFIG", str(explicit))
    assert load_config()[0].default_model == "mock:explicit"
    monkeypatch.setenv("LLMPLEX_DEFAULT_MODEL", "mock:env")
    assert load_config()[0].default_model == "mock:env"
    config, _ = load_config(overrides={"default_model": "mock:kwarg"})
    assert config.default_model == "mock:kwarg"
    assert config.aliases == {"u": "mock:u", "p": "mock:p"}  # tables merge across sources


def test_env_lists_and_nested_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPLEX_DISABLED", "litellm, gemini")
    monkeypatch.setenv("LLMPLEX_ENABLED", "openai")
    monkeypatch.setenv("LLMPLEX_THROTTLE__MAX_ATTEMPTS", "3")
    config, _ = load_config()
    assert config.disabled == ("litellm", "gemini")
    assert config.enabled == ("openai",)
    assert config.throttle.max_attempts == 3


def test_error_names_file_key_expected_and_found(isolated_config: Path) -> None:
    write(isolated_config / "llmplex.toml", "[throttle]\nmax_attempts = 'five'\n")
    with pytest.raises(LLMConfigurationError) as info:
        load_config()
    message = str(info.value)
    assert str(isolated_config / "llmplex.toml") in message
    assert "key 'throttle.max_attempts'" in message
    assert 'expected an integer; found the string "five"' in message


def test_unknown_key_is_named_with_its_source(monkeypatch: pytest.MonkeyPatch) -> None:
    # an unknown LLMPLEX_* variable is ignored with a warning naming the closest setting (issue 35 item 5)
    monkeypatch.setenv("LLMPLEX_DEFAULT_MODLE", "mock:x")
    with pytest.warns(UserWarning, match=r"LLMPLEX_DEFAULT_MODLE is not an llmplex setting.*LLMPLEX_DEFAULT_MODEL"):
        config, _ = load_config()
    assert config.default_model != "mock:x"


def test_keyword_source_is_named() -> None:
    with pytest.raises(
        LLMConfigurationError, match=r"keyword argument: key 'timeout'.*greater than 0.*found the integer -1"
    ):
        llmplex.Client(timeout=-1)


def test_invalid_toml_names_the_file(isolated_config: Path) -> None:
    path = write(isolated_config / "llmplex.toml", "default_model = \n")
    with pytest.raises(LLMConfigurationError, match=f"config file {path} is not valid TOML"):
        load_config()


def test_missing_explicit_file_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LLMPLEX_CONFIG", str(tmp_path / "absent.toml"))
    with pytest.raises(LLMConfigurationError, match="does not exist"):
        load_config()


def test_config_path_argument(isolated_config: Path) -> None:
    path = write(isolated_config / "mine.toml", '[aliases]\nfast = "mock:fast-model"\n')
    assert llmplex.Client(path).route("fast").spec == "mock:fast-model"


def test_secret_values_never_appear_in_config_errors(isolated_config: Path) -> None:
    write(isolated_config / "llmplex.toml", '[providers.good]\napi_key = ["sk-verysecretvalue123"]\n')
    client = llmplex.Client()
    with pytest.raises(LLMConfigurationError) as info:
        client.route("good:m")
    assert "sk-verysecretvalue123" not in str(info.value)
    assert "key 'providers.good.api_key'" in str(info.value) and "found ***" in str(info.value)


def test_provider_env_var_applies_to_its_own_prefix_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOD_API_KEY", "sk-fromenvironment0001")
    client = llmplex.Client(providers={"other": {"plugin": "good"}})
    assert client.router.instance("good").settings.problems() == []
    assert client.router.instance("other").settings.problems() == ["api_key not set (GOOD_API_KEY)"]


def test_api_keys_are_hidden_in_reprs_and_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOD_API_KEY", "sk-fromenvironment0002")
    settings = llmplex.Client().router.instance("good").settings
    assert "sk-fromenvironment0002" not in repr(settings)
    assert "sk-fromenvironment0002" not in settings.model_dump_json()


def test_non_config_llmplex_variables_are_not_read_as_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LLMPLEX_CACHE_DIR", str(tmp_path / "cache"))
    assert load_config()[0].default_model == "llamacpp:qwen2.5-coder-1.5b"
