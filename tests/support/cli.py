"""Run the installed ``llmplex`` console script in a child process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["modules_imported_by", "rich_tables", "run_llmplex", "squashed"]

LLMPLEX = Path(sys.executable).with_name("llmplex")
SYSMODULES_HOOK = Path(__file__).with_name("sysmodules")


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


def modules_imported_by(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """:func:`run_llmplex`, plus every module name in the child's ``sys.modules`` at exit."""
    with tempfile.TemporaryDirectory() as folder:
        dump = Path(folder) / "modules.txt"
        pythonpath = os.pathsep.join(p for p in (str(SYSMODULES_HOOK), os.environ.get("PYTHONPATH")) if p)
        result = run_llmplex(*args, cwd=cwd, env={"SYSMODULES_DUMP": str(dump), "PYTHONPATH": pythonpath})
        assert dump.is_file(), f"the sys.modules dump was not written: {result.stderr[-2000:]}"
        return result, set(dump.read_text(encoding="utf-8").splitlines())


def rich_tables(output: str) -> list[tuple[str, dict[str, list[str]]]]:
    """Tables drawn by rich as ``(title, {first cell: [every cell]})``; cells wrapped over lines are joined.

    The title is the last non-empty line before the table's top border ("" when none).
    """
    tables: list[tuple[str, dict[str, list[str]]]] = []
    last_text = ""
    rows: dict[str, list[str]] | None = None
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("┏"):
            rows, current = {}, None
            tables.append((last_text, rows))
        elif line.startswith("│") and rows is not None:
            cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
            if cells[0] or current is None:
                current = rows.setdefault(cells[0], cells)
            else:
                for index, cell in enumerate(cells):
                    if cell:
                        current[index] = f"{current[index]} {cell}".strip()
        elif line.startswith("└"):
            rows, current = None, None
        elif line.strip():
            last_text = line.strip()
    return tables


def squashed(text: str) -> str:
    """``text`` without any whitespace: compares table cells however rich folded them."""
    return "".join(text.split())
