"""The `llmplex` command: providers table, complete, errors and exit codes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from llmplex.cli.main import cli
from tests.support.cli import rich_tables


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def test_providers_check_lists_mock_and_broken_plugins() -> None:
    code, out, _ = invoke("providers", "--check")
    rows = rich_tables(out)[0][1]
    assert code == 0
    assert rows["mock"][1:4] == ["llmplex", "0.1.0", "yes"] and rows["mock"][5] == "ok"
    assert rows["broken"][5] == "broken: RuntimeError: this plugin is broken on purpose"


def test_providers_shows_disabled_and_unconfigured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPLEX_DISABLED", "sentinel")
    code, out, _ = invoke("providers", "--check")
    rows = rich_tables(out)[0][1]
    assert code == 0 and rows["sentinel"][5] == "disabled" and rows["good"][4] == "no: api_key not set (GOOD_API_KEY)"


def test_complete_prints_the_answer() -> None:
    assert invoke("complete", "-m", "mock:echo", "hi") == (0, "hi\n", "[answered by mock:echo]\n")


def test_complete_reads_the_prompt_from_stdin() -> None:
    code, out, _ = invoke("complete", "-m", "mock:echo", input="from stdin\n")
    assert (code, out) == (0, "from stdin\n")


def test_complete_options_and_json() -> None:
    code, out, _ = invoke("complete", "-m", "mock:echo", "--max-tokens", "1", "-o", "temperature=0.5", "--json", "a b")
    data = json.loads(out)
    assert code == 0 and data["text"] == "a" and data["finish_reason"] == "length" and data["provider"] == "mock"


def test_system_prompt_option_is_sent(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="llmplex"):
        code, out, _ = invoke("complete", "-m", "mock:echo", "--system", "be terse", "--json", "x")
    rendered = next(r for r in caplog.records if r.getMessage() == "prompt.rendered")
    messages = rendered.llmplex["payload"]["messages"]  # type: ignore[attr-defined]
    assert code == 0 and json.loads(out)["text"] == "x"
    assert messages == [{"role": "system", "content": "be terse"}, {"role": "user", "content": "x"}]


def test_llm_error_is_one_line_with_its_own_exit_code() -> None:
    code, out, err = invoke("complete", "-m", "nosuch:model", "hi")
    assert code == 3 and out == ""
    assert err.startswith("error: LLMConfigurationError: unknown provider 'nosuch'") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_debug_shows_the_traceback() -> None:
    _, _, err = invoke("--debug", "complete", "-m", "nosuch:model", "hi")
    assert "Traceback" in err


def test_bad_option_syntax_is_a_usage_error() -> None:
    code, _, err = invoke("complete", "-m", "mock:echo", "-o", "novalue", "x")
    assert code == 2 and "key=value" in err


def test_config_file_option(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('default_model = "mock:echo"\n')
    code, out, _ = invoke("--config", str(config), "complete", "default model")
    assert (code, out) == (0, "default model\n")


def test_console_script_runs_as_a_real_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "llmplex", "complete", "-m", "mock:echo", "hi"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "hi\n"), result.stderr


def test_plugins_contribute_commands_lazily() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    assert "hello" in out
    assert invoke("hello", "you") == (0, "hello you from a plugin\n", "")


def test_a_broken_plugin_command_is_reported_without_breaking_others() -> None:
    code, _, err = invoke("brokencmd")
    assert code == 1
    assert "command 'brokencmd' from llmplex-testplugins failed to load" in err
    assert invoke("complete", "-m", "mock:echo", "ok")[1] == "ok\n"


def test_missing_config_file_names_the_option(tmp_path: Path) -> None:
    code, _, err = invoke("--config", str(tmp_path / "absent.toml"), "providers")
    assert code == 3
    assert "absent.toml does not exist (named by the config argument / --config)" in err
    assert len(err.strip().splitlines()) == 1


def test_debug_shows_the_traceback_of_a_config_error(tmp_path: Path) -> None:
    code, _, err = invoke("--debug", "--config", str(tmp_path / "absent.toml"), "providers")
    assert code == 3 and "Traceback" in err and "absent.toml does not exist" in err
