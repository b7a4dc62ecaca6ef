"""Issue 26 item 7: the kit's error-kind check for a read timeout runs under its own deadline — a plugin
that ignores the timeout fails the check in seconds, not when the stalled provider hangs up ten minutes later.

The reference plugin (and a mutant of it that sends no timeout at all) runs the one check in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from llmplex.testing.check_errors import TIMEOUT_LIMIT
from tests.conformance.reference_plugin.mutants import Mutant, apply
from tests.conformance.reference_plugin.site import HERE, SOURCE_VARIABLE

ROOT = HERE.parents[2]
SUITE = HERE / "test_reference_conformance.py"
NO_TIMEOUT = Mutant(
    "no_timeout_at_all",
    "the plugin sends no timeout (httpx then waits forever)",
    "return httpx.USE_CLIENT_DEFAULT if timeout is None else timeout",
    "return None",
)


def _run_check(source: Path) -> tuple[int, str, float]:
    env = {**os.environ, SOURCE_VARIABLE: str(source)}
    command = [
        sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(SUITE),
        "-k", "test_errors_are_classified and timeout",
    ]  # fmt: skip
    began = time.monotonic()
    done = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    return done.returncode, done.stdout + done.stderr, time.monotonic() - began


def test_item_7_a_plugin_ignoring_the_timeout_fails_the_timeout_kind_in_seconds(tmp_path: Path) -> None:
    import shutil

    source = tmp_path / "mutant"
    shutil.copytree(HERE / "src", source, ignore=shutil.ignore_patterns("__pycache__"))
    apply(NO_TIMEOUT, source)
    code, output, took = _run_check(source)
    assert code == 1, output
    assert "ignored the timeout" in output and "1 failed" in output, output
    assert took < TIMEOUT_LIMIT + 60, took  # the stalled answer lasts 10 minutes


def test_item_7_the_reference_plugin_passes_the_timeout_kind(tmp_path: Path) -> None:
    code, output, _ = _run_check(HERE / "src")
    assert code == 0 and "passed" in output and "failed" not in output, output
