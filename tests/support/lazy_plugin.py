"""The check every SDK-backed plugin's packaging tests share: ``import llmplex`` imports neither the SDK nor the
plugin, and the first use of the prefix loads the plugin's hooks."""

from __future__ import annotations

import subprocess
import sys


def assert_loaded_only_on_first_use(sdk_module: str, prefix: str, model: str) -> None:
    """In a fresh interpreter: no ``sdk_module`` nor ``llmplex_<prefix>`` after ``import llmplex``, hooks after use."""
    plugin = f"llmplex_{prefix}"
    code = (
        "import sys, llmplex\n"
        f"assert {sdk_module!r} not in sys.modules and {plugin!r} not in sys.modules\n"
        f"client = llmplex.Client(providers={{{prefix!r}: {{'api_key': 'x-test-key'}}}})\n"
        f"client.route({f'{prefix}:{model}'!r})\n"
        f"assert {plugin + '.hooks'!r} in sys.modules\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
