"""Issue 35 item 5: small frictions a new user met: one tool source where a list is expected, the local presets'
default URLs in ``providers --check``, and an unknown ``LLMPLEX_*`` variable that is a warning, not a refusal."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import llmplex
from llmplex.cli.main import cli
from llmplex.config.loader import UnknownSettingWarning, load_config
from llmplex.errors import LLMConfigurationError
from llmplex.mcp import MCPServer
from tests.support.cli import rich_tables

TOOLBOX = Path(__file__).parents[2] / "mcp" / "servers" / "toolbox.py"
SECRET = "sk-round4-never-shown-7e6d5c4b3a29"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def call(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    return {"id": "c1", "name": name, "arguments": json.dumps(arguments)}


@pytest.mark.parametrize("single", ["server", "selection"])
def test_item_5_one_mcp_source_is_taken_where_a_list_is_expected(single: str, tmp_path: Path) -> None:
    server = MCPServer.stdio(
        sys.executable, [str(TOOLBOX), "stdio"], name="toolbox", env={"TOOLBOX_MARK_DIR": str(tmp_path)}
    )
    with llmplex.Client() as client:
        backend = client.provider_client("mock")
        backend.push(tool_calls=[call("add", {"a": 2, "b": 40})])
        backend.push("42")
        tools = server if single == "server" else server.tools(include=["add"])
        assert client.complete("mock:m", "2 + 40?", tools=tools).text == "42"


def test_item_5_one_function_is_a_list_of_one_and_anything_else_asks_for_a_list() -> None:
    with llmplex.Client() as client:
        backend = client.provider_client("mock")
        backend.push(tool_calls=[call("add", {"a": 1, "b": 2})])
        backend.push("3")
        assert client.complete("mock:m", "1 + 2?", tools=add).text == "3"
        backend.push("ok")
        assert client.complete("mock:m", "hi", tools=(tool for tool in [add])).text == "ok"  # any iterable
        for wrong in (5, "add", b"add"):
            with pytest.raises(LLMConfigurationError, match="a list of tools"):
                client.complete("mock:m", "hi", tools=wrong)


def test_item_5_providers_check_shows_the_local_presets_default_urls() -> None:
    result = CliRunner().invoke(cli, ["providers", "--check"])
    assert result.exit_code == 0
    settings = {title: rows for title, rows in rich_tables(result.stdout)}
    expected = {"ollama": "11434", "vllm": "8000", "lmstudio": "1234"}
    for prefix, port in expected.items():
        table = next(rows for title, rows in settings.items() if f"`{prefix}`" in title)
        assert table["base_url"][4] == f"default (http://127.0.0.1:{port}/v1)"


def test_item_5_an_unknown_llmplex_variable_warns_naming_the_closest_setting_and_is_ignored() -> None:
    with pytest.warns(UnknownSettingWarning) as caught:
        config, _ = load_config(environ={"LLMPLEX_KEY": SECRET, "LLMPLEX_THROTLE__MAX_ATTEMPTS": "3"})
    messages = sorted(str(w.message) for w in caught)
    assert "LLMPLEX_KEY is not an llmplex setting and is ignored; did you mean LLMPLEX_MASTER_KEY?" in messages[0]
    assert "did you mean LLMPLEX_THROTTLE__MAX_ATTEMPTS?" in messages[1]
    assert all(SECRET not in m for m in messages) and config.throttle.max_attempts != 3


def test_item_5_serve_starts_its_client_with_an_unknown_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPLEX_KEY", SECRET)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with llmplex.Client() as client:
            assert client.complete("mock:m", "hi").text
    assert any(issubclass(w.category, UnknownSettingWarning) for w in caught)


def test_item_5_known_settings_are_still_checked_strictly() -> None:
    with pytest.raises(LLMConfigurationError, match="LLMPLEX_TIMEOUT"):
        load_config(environ={"LLMPLEX_TIMEOUT": "soon"})
    with pytest.raises(LLMConfigurationError, match="no such key"):
        load_config(environ={"LLMPLEX_THROTTLE__MAX_ATEMPTS": "3"})  # a typo inside a known table
