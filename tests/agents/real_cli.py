"""The real ``claude`` and ``codex`` CLIs from npm, run non-interactively against a gateway.

tox's py env installs both into its own npm prefix (``{envtmpdir}/npm``, commands_pre); each run gets an empty
home, no credential but the gateway's key, and no way out of 127.0.0.1 but what the gateway's upstreams are.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gateway.harness import MASTER_KEY, Gateway

__all__ = ["NPM_PREFIX", "run_claude", "run_codex"]

NPM_PREFIX = Path(sys.prefix) / "tmp" / "npm"
_PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}
_TIMEOUT = 240


def cli(name: str) -> str:
    """The installed CLI: the environment's npm prefix first, then PATH."""
    local = NPM_PREFIX / "node_modules" / ".bin" / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"the real {name} CLI is not installed: run `npm install --prefix {NPM_PREFIX} {_PACKAGES[name]}` "
            "(tox does this in commands_pre)"
        )
    return found


def _env(home: Path) -> dict[str, str]:
    kept = ("PATH", "LANG", "TERM", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "TMPDIR")
    home.mkdir(parents=True, exist_ok=True)
    env = {name: os.environ[name] for name in kept if name in os.environ}
    env.update(HOME=str(home), DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", NO_COLOR="1")
    return env


def run_claude(
    gateway: Gateway, model: str, prompt: str, workdir: Path, *tools: str
) -> subprocess.CompletedProcess[str]:
    """``claude -p PROMPT --model MODEL`` with its API at the gateway, streaming JSON events; ``tools`` allowed."""
    env = _env(workdir.parent / "claude-home")
    env.update(ANTHROPIC_BASE_URL=gateway.url, ANTHROPIC_API_KEY=MASTER_KEY, CLAUDE_CONFIG_DIR=env["HOME"] + "/.claude")
    env.update(ANTHROPIC_SMALL_FAST_MODEL=model, ANTHROPIC_DEFAULT_HAIKU_MODEL=model)
    command = [cli("claude"), "-p", prompt, "--model", model, "--output-format", "stream-json", "--verbose"]
    command += ["--include-partial-messages", *(["--allowedTools", ",".join(tools)] if tools else [])]
    return subprocess.run(
        command,
        check=False,
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


def run_codex(gateway: Gateway, model: str, prompt: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """``codex exec PROMPT -m MODEL`` with ``llmplex serve`` as its model provider (``wire_api = "responses"``)."""
    env = _env(workdir.parent / "codex-home")
    env.update(CODEX_HOME=env["HOME"], LLMPLEX_API_KEY=MASTER_KEY)
    provider = (
        f'model_providers.llmplex={{name="llmplex",base_url="{gateway.url}/v1",'
        'env_key="LLMPLEX_API_KEY",wire_api="responses"}'
    )
    command = [cli("codex"), "exec", "--skip-git-repo-check", "-c", provider, "-c", 'model_provider="llmplex"']
    command += ["-m", model, prompt]
    return subprocess.run(
        command,
        check=False,
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
