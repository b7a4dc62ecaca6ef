"""Run the installed ``llmplex`` console script in a child process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["run_llmplex"]

LLMPLEX = Path(sys.executable).with_name("llmplex")


def run_llmplex(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """``llmplex ARGS...`` in ``cwd`` with no LLMPLEX_* variable but ``env``, an empty XDG config home
    and no terminal; returns the finished process (stdout, stderr, returncode)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")}
    base |= {"XDG_CONFIG_HOME": str(cwd / "xdg"), "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [str(LLMPLEX), *args],
        cwd=cwd,
        env=base | (env or {}),
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
