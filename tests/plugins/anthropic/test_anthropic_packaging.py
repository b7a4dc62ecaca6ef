"""The plugin is found through its entry point, imported only when used, and listed by the CLI."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from llmplex.cli.main import cli


def test_import_llmplex_imports_no_sdk_and_first_use_loads_the_plugin() -> None:
    code = (
        "import sys, llmplex\n"
        "assert 'anthropic' not in sys.modules and 'llmplex_anthropic' not in sys.modules\n"
        "client = llmplex.Client(providers={'anthropic': {'api_key': 'x-test-key'}})\n"
        "client.route('anthropic:claude-sonnet-4-6')\n"
        "assert 'llmplex_anthropic.hooks' in sys.modules\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_llmplex_providers_lists_anthropic_and_whether_it_has_a_key() -> None:
    result = CliRunner().invoke(cli, ["providers", "--check"], env={"ANTHROPIC_API_KEY": ""}, terminal_width=400)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "│ anthropic " in line)
    assert "llmplex-anthropic" in row
    assert "ANTHROPIC_API_KEY" in row
