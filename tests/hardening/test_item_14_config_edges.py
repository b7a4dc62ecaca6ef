"""Issue 12 item 14: odd encodings, non-finite numbers and Python words in config errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.config.loader import load_config
from tests.support.cli import run_llmplex

CONFIG_ERROR = 3
_PYTHON_WORDS = re.compile(
    r"\b(tuple|dict|dictionary|list|NoneType|None|str|int|float|bool|datetime)\b|Input should|Value error"
)


def _assert_one_paragraph_config_error(result: object, *needles: str) -> str:
    assert result.returncode == CONFIG_ERROR, (result.returncode, result.stderr)  # type: ignore[attr-defined]
    err: str = result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in err, err
    assert err.startswith("error: LLMConfigurationError: "), err
    assert "\n\n" not in err.strip(), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('default_model = "caf\xe9"\n'.encode("latin-1"), "byte 0xe9 on line 1 is not valid UTF-8"),
        ("# r\xe9sum\xe9\ntimeout = 5\n".encode("cp1252"), "on line 1 is not valid UTF-8"),
        ('default_model = "mock:echo"\n'.encode("utf-16"), "is UTF-16 text"),
        (b"\xff\xfe\x00\x00" + "timeout = 1\n".encode("utf-32-le"), "is UTF-32 text"),
    ],
    ids=["latin-1", "cp1252", "utf-16", "utf-32"],
)
def test_item_14_a_config_file_that_is_not_utf8_is_a_config_error_naming_the_file(
    isolated_config: Path, content: bytes, said: str
) -> None:
    (isolated_config / "llmplex.toml").write_bytes(content)
    with pytest.raises(LLMConfigurationError) as info:
        load_config()
    assert str(isolated_config / "llmplex.toml") in str(info.value)
    assert said in str(info.value) and "save it again as UTF-8" in str(info.value)
    result = run_llmplex("complete", "-m", "mock:echo", "hi", cwd=isolated_config)
    _assert_one_paragraph_config_error(result, str(isolated_config / "llmplex.toml"), said)


def test_item_14_a_named_config_file_that_is_not_utf8_is_named(isolated_config: Path) -> None:
    path = isolated_config / "odd.toml"
    path.write_bytes(b"timeout = 5 # \x80\n")
    result = run_llmplex("--config", str(path), "complete", "-m", "mock:echo", "hi", cwd=isolated_config)
    _assert_one_paragraph_config_error(result, str(path), "not UTF-8")


def test_item_14_a_utf8_byte_order_mark_is_accepted_silently(isolated_config: Path) -> None:
    (isolated_config / "llmplex.toml").write_bytes(b'\xef\xbb\xbfdefault_model = "mock:echo"\ntimeout = 7\n')
    config, _ = load_config()
    assert (config.default_model, config.timeout) == ("mock:echo", 7)
    result = run_llmplex("complete", "bom ok", cwd=isolated_config)
    assert (result.returncode, result.stdout.strip()) == (0, "bom ok"), result.stderr
    assert "error" not in result.stderr and "warning" not in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "Infinity", "1e999", "-1e999"])
def test_item_14_non_finite_timeout_in_the_environment_is_rejected_naming_variable_and_key(
    isolated_config: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("LLMPLEX_TIMEOUT", value)
    with pytest.raises(LLMConfigurationError) as info:
        llmplex.Client()
    message = str(info.value)
    assert "environment variable LLMPLEX_TIMEOUT: key 'timeout'" in message, message
    assert "expected a finite number (inf and nan are not allowed)" in message
    result = run_llmplex("complete", "-m", "mock:echo", "hi", cwd=isolated_config, env={"LLMPLEX_TIMEOUT": value})
    _assert_one_paragraph_config_error(result, "LLMPLEX_TIMEOUT", "key 'timeout'", "finite number")


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("timeout = inf\n", "timeout"),
        ("timeout = nan\n", "timeout"),
        ("timeout = -inf\n", "timeout"),
        ("timeout = +inf\n", "timeout"),
        ("[throttle]\nmax_delay = inf\n", "throttle.max_delay"),
        ("[throttle.providers.mock]\nmax_total_delay = nan\n", "throttle.providers.mock.max_total_delay"),
        ("[providers.openai]\ntimeout = inf\n", "providers.openai.timeout"),
    ],
)
def test_item_14_non_finite_numbers_in_toml_are_rejected_naming_file_and_key(
    isolated_config: Path, toml: str, key: str
) -> None:
    path = isolated_config / "llmplex.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(LLMConfigurationError) as info:
        llmplex.Client().route("openai:gpt-4o-mini")
    assert f"{path}: key '{key}': expected a finite number (inf and nan are not allowed)" in str(info.value)


def test_item_14_non_finite_timeout_as_keyword_is_rejected_at_construction() -> None:
    with pytest.raises(LLMConfigurationError, match=r"keyword argument: key 'timeout': expected a finite number"):
        llmplex.Client(timeout=float("inf"))


def _route_all() -> None:
    client = llmplex.Client()
    for model in ("good:m", "openai:gpt-4o-mini"):
        client.route(model)


@pytest.mark.parametrize(
    ("toml", "line"),
    [
        ("enabled = 'mock'\n", "key 'enabled': expected an array; found the string \"mock\""),
        ("aliases = 3\n", "key 'aliases': expected a table; found the integer 3"),
        ('[fallbacks]\n"mock:a" = 1\n', "key 'fallbacks.\"mock:a\"': expected an array; found the integer 1"),
        ("default_model = 5\n", "key 'default_model': expected a string; found the integer 5"),
        ("throttle = 'fast'\n", "key 'throttle': expected a table; found the string \"fast\""),
        ("budget = [1]\n", "key 'budget': expected a table; found the array [1]"),
        ("[throttle]\nmax_attempts = 2.5\n", "key 'throttle.max_attempts': expected an integer; found the number 2.5"),
        (
            "[throttle]\nbase_delay = -1\n",
            "key 'throttle.base_delay': expected a number at least 0; found the integer -1",
        ),
        ("disabled = [1, 'x']\n", "key 'disabled[0]': expected a string; found the integer 1"),
        (
            "[providers.x]\nplugin = 3\n",
            "key 'providers.x.plugin': expected a plugin name such as \"openai\"; found the integer 3",
        ),
        (
            "[providers.good]\nshout = 'maybe'\n",
            "key 'providers.good.shout': expected true or false; found the string \"maybe\"",
        ),
        (
            "[providers.good]\nbase_url = 2024-01-01\n",
            "key 'providers.good.base_url': expected a string; found the date 2024-01-01",
        ),
        (
            "[providers.openai]\napi = 3\n",
            "key 'providers.openai.api': expected 'responses' or 'chat'; found the integer 3",
        ),
        (
            "[providers.openai]\norganization = {a = 1}\n",
            "key 'providers.openai.organization': expected a string; found the table {a = 1}",
        ),
    ],
)
def test_item_14_config_errors_speak_toml_not_python(isolated_config: Path, toml: str, line: str) -> None:
    path = isolated_config / "llmplex.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(LLMConfigurationError) as info:
        _route_all()
    message = str(info.value)
    assert f"{path}: {line}" in message, message
    assert not _PYTHON_WORDS.search(message), message


def test_item_14_a_validator_problem_names_its_key_not_the_whole_config() -> None:
    with pytest.raises(LLMConfigurationError) as info:
        llmplex.Client(providers={"x": {"plugin": ""}}, aliases={"fast": "mock:echo"})
    message = str(info.value)
    assert "keyword argument: key 'providers.x.plugin': expected a plugin name" in message
    assert "key ''" not in message and "aliases" not in message, message


def test_item_14_environment_variables_that_clash_are_a_config_error(isolated_config: Path) -> None:
    env = {"LLMPLEX_THROTTLE": "3", "LLMPLEX_THROTTLE__MAX_ATTEMPTS": "2"}
    result = run_llmplex("complete", "-m", "mock:echo", "hi", cwd=isolated_config, env=env)
    _assert_one_paragraph_config_error(result, "LLMPLEX_THROTTLE and LLMPLEX_THROTTLE__MAX_ATTEMPTS conflict")
