"""The plugin is found through its entry point, imported only when used, and listed by the CLI."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from llmplex.cli.main import cli


def test_import_llmplex_imports_no_sdk_and_first_use_loads_the_plugin() -> None:
    code = (
        "import sys, llmplex\n"
        "assert 'google.genai' not in sys.modules and 'llmplex_gemini' not in sys.modules\n"
        "client = llmplex.Client(providers={'gemini': {'api_key': 'x-test-key'}})\n"
        "client.route('gemini:gemini-2.5-flash')\n"
        "assert 'llmplex_gemini.hooks' in sys.modules\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_llmplex_providers_lists_gemini_as_configured_with_a_key() -> None:
    result = CliRunner().invoke(cli, ["providers", "--check"], env={"GEMINI_API_KEY": "x-test-key"}, terminal_width=400)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "│ gemini " in line)
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[1:3] == ["gemini", "llmplex-gemini"], cells
    assert cells[4:7] == ["yes", "yes", "ok"], cells
