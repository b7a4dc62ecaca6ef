"""The plugin is found through its entry point, imported only when used, and listed by the CLI."""

from __future__ import annotations

from click.testing import CliRunner

from llmplex.cli.main import cli
from tests.support.lazy_plugin import assert_loaded_only_on_first_use


def test_import_llmplex_imports_no_sdk_and_first_use_loads_the_plugin() -> None:
    assert_loaded_only_on_first_use("google.genai", "gemini", "gemini-2.5-flash")


def test_llmplex_providers_lists_gemini_as_configured_with_a_key() -> None:
    result = CliRunner().invoke(cli, ["providers", "--check"], env={"GEMINI_API_KEY": "x-test-key"}, terminal_width=400)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "│ gemini " in line)
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[1:3] == ["gemini", "llmplex-gemini"], cells
    assert cells[4:7] == ["yes", "yes", "ok"], cells
