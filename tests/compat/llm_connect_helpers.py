"""What the seed 000 (llm_connect) tests share: the ``fault:`` instance in ./llmplex.toml, the fake ``claude``
CLI, and the bodies the fault server received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.compat.conftest import FAULT_KEY
from tests.plugins.claude_code.conftest import FakeCLI
from tests.support.fault_server import FaultServer

MODEL = "fault:gpt-4o-mini"


@pytest.fixture
def fault_toml(fault_server: FaultServer, isolated_config: Path) -> FaultServer:
    """./llmplex.toml declaring ``fault:`` (openai plugin on the fault server), one attempt per call."""
    (isolated_config / "llmplex.toml").write_text(
        f'[providers.fault]\nplugin = "openai"\nbase_url = "{fault_server.url}"\napi_key = "{FAULT_KEY}"\n'
        'api = "chat"\n\n[throttle]\nmax_attempts = 1\n\n[aliases]\nfast = "fault:gpt-4o-mini"\n',
        encoding="utf-8",
    )
    return fault_server


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCLI:
    """The fake ``claude`` CLI, found through CLAUDE_CODE_CLI_PATH (what a user of the CLI sets)."""
    cli = FakeCLI(tmp_path / "bin", monkeypatch, found_by_env=True)
    monkeypatch.setenv("LLMPLEX_THROTTLE__MAX_ATTEMPTS", "1")
    return cli


def sent(server: FaultServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests]
