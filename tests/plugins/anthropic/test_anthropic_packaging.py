"""The plugin is found through its entry point, imported only when used, and listed by the CLI."""

from __future__ import annotations

from click.testing import CliRunner

from llmplex.cli.main import cli
from tests.support.lazy_plugin import assert_loaded_only_on_first_use


def test_import_llmplex_imports_no_sdk_and_first_use_loads_the_plugin() -> None:
    assert_loaded_only_on_first_use("anthropic", "anthropic", "claude-sonnet-4-6")


def test_llmplex_providers_lists_anthropic_and_whether_it_has_a_key() -> None:
    result = CliRunner().invoke(cli, ["providers", "--check"], env={"ANTHROPIC_API_KEY": ""}, terminal_width=400)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "│ anthropic " in line)
    assert "llmplex-anthropic" in row
    assert "ANTHROPIC_API_KEY" in row
