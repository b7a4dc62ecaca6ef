"""Run a program written for a seed system with its imports swapped for ``llmplex.compat``, in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any


def swap_imports(program: str, pattern: str, replacement: str) -> str:
    """``program`` with every ``from <pattern> import`` line rewritten; nothing else changes."""
    swapped = re.sub(rf"^from {pattern} import", f"from {replacement} import", program, flags=re.M)
    before = [line for line in program.splitlines() if not line.startswith("from ")]
    after = [line for line in swapped.splitlines() if not line.startswith("from ")]
    assert before == after, "only import lines may change"
    assert swapped != program, "the program has no import to swap"
    return swapped


def run_program(source: str, directory: Path, timeout: float = 120) -> Any:
    """Run ``source`` with this interpreter in ``directory``; its last stdout line is JSON, returned parsed."""
    path = directory / "program.py"
    path.write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(path)], cwd=directory, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"the program failed:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
