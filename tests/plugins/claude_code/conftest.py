"""A fake `claude` executable written per test, and a client whose claude-code provider runs it."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

import llmplex

FAKE_SOURCE = Path(__file__).with_name("fake_claude.py")
API_KEY = "sk-ant-test-9d8c7b6a5f4e3d2c"


def write_executable(directory: Path, source: Path, interpreter_flags: str = "") -> Path:
    """``directory/claude``: the fake CLI ``source`` as an executable run by this Python."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    path.write_text(f"#!{sys.executable}{interpreter_flags}\n" + source.read_text())
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


class FakeCLI:
    """The fake executable, its scenario, and what it was run with."""

    def __init__(self, directory: Path, monkeypatch: pytest.MonkeyPatch, *, found_by_env: bool = False) -> None:
        """Write it in ``directory``; ``found_by_env``: name it in CLAUDE_CODE_CLI_PATH, as a CLI user does."""
        self.path = write_executable(directory, FAKE_SOURCE)
        self.record = directory / "runs.jsonl"
        self.pids = directory / "pids.txt"
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        if found_by_env:
            monkeypatch.setenv("CLAUDE_CODE_CLI_PATH", str(self.path))

    def scenario(self, name: str, **settings: str) -> None:
        """Make the next runs behave as ``name`` (see fake_claude.py), e.g. ``text=...``."""
        (self.path.parent / "scenario.json").write_text(json.dumps({"scenario": name, **settings}))

    def runs(self) -> list[dict[str, Any]]:
        """Every run so far: argv, stdin and the whole environment it got."""
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCLI:
    """A fresh fake CLI in its own directory (answers "Hello there" until told otherwise)."""
    return FakeCLI(tmp_path / "bin", monkeypatch)


@pytest.fixture
def llm(fake_cli: FakeCLI) -> llmplex.Client:
    """A client whose claude-code provider runs the fake CLI; one attempt per call."""
    return llmplex.Client(
        providers={"claude-code": {"cli_path": str(fake_cli.path), "api_key": API_KEY}},
        throttle={"max_attempts": 1},
    )
