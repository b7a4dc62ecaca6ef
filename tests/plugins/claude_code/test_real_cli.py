"""The real `claude` CLI from npm: version detection, and the error path with no credentials.

No network is reached: the CLI runs with an empty home (no login) and its API
pointed at a closed local port.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

import llmplex
from llmplex.errors import LLMConfigurationError

NPM_PREFIX = Path(sys.prefix) / "tmp" / "npm"
"""Where tox installs the CLI (``{envtmpdir}/npm``: the test environment's own prefix)."""


def real_cli() -> str:
    """The installed claude CLI: the environment's npm prefix first, then PATH."""
    local = NPM_PREFIX / "node_modules" / ".bin" / "claude"
    if local.exists():
        return str(local)
    found = shutil.which("claude")
    if found is None:
        pytest.fail(
            "the real claude CLI is not installed: run `npm install --prefix "
            f"{NPM_PREFIX} @anthropic-ai/claude-code` (tox does this in commands_pre) "
            "or `npm install -g @anthropic-ai/claude-code`"
        )
    return found


@pytest.fixture
def offline_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    """A client running the real CLI with no credentials and no way out of 127.0.0.1."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    monkeypatch.setenv("DISABLE_AUTOUPDATER", "1")
    return llmplex.Client(providers={"claude-code": {"cli_path": real_cli()}}, throttle={"max_attempts": 1})


def test_version_is_detected(offline_cli: llmplex.Client) -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", offline_cli.provider_client("claude-code").version())


def test_no_credentials_is_a_configuration_error(offline_cli: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="not authenticated") as caught:
        offline_cli.complete("claude-code:haiku", "Say hi", timeout=60)
    assert "Not logged in" in str(caught.value)


def test_no_credentials_while_streaming(offline_cli: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="not authenticated"):
        list(offline_cli.stream("claude-code:haiku", "Say hi", timeout=60))
