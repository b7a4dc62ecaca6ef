"""The real ``claude`` and ``codex`` CLIs from npm, run non-interactively against a gateway.

tox's py env installs both into its own npm prefix (``{envtmpdir}/npm``, commands_pre); each run gets an empty
home, no credential but the gateway's key, and no way out of 127.0.0.1 but what the gateway's upstreams are.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gateway.harness import MASTER_KEY, Gateway

__all__ = ["DOCS", "NPM_PREFIX", "recipe", "run_claude", "run_codex"]

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
    env.update(HOME=str(home), DISABLE_AUTOUPDATER="1", NO_COLOR="1")
    return env


DOCS = Path(__file__).resolve().parents[2] / "docs" / "gateway" / "agents.md"
"""The Coding agents page: its recipes are what these runs use."""


def recipe(name: str) -> str:
    """The fenced block under ``<!-- recipe: NAME -->`` on the Coding agents page."""
    text = DOCS.read_text(encoding="utf-8")
    marker = f"<!-- recipe: {name} -->"
    assert marker in text, f"docs/gateway/agents.md lost its {name} recipe"
    block = text[text.index(marker) + len(marker) :].split("```", 2)[1]
    return block.split("\n", 1)[1]


def _claude_env(gateway: Gateway, model: str) -> dict[str, str]:
    """The variables the Claude Code recipe exports, for this gateway, key and model."""
    found: dict[str, str] = {}
    for line in recipe("claude-env").splitlines():
        if line.startswith("$ export "):
            for pair in line.removeprefix("$ export ").split():
                name, _, value = pair.partition("=")
                found[name] = value
    assert found.pop("ANTHROPIC_BASE_URL") == "http://127.0.0.1:4000" and found.pop("ANTHROPIC_API_KEY")
    swapped = {name: model if value == "openai:gpt-4o-mini" else value for name, value in found.items()}
    return {**swapped, "ANTHROPIC_BASE_URL": gateway.url, "ANTHROPIC_API_KEY": MASTER_KEY}


def run_claude(
    gateway: Gateway, model: str, prompt: str, workdir: Path, *tools: str
) -> subprocess.CompletedProcess[str]:
    """``claude -p PROMPT --model MODEL`` set up as the docs say, streaming JSON events; ``tools`` allowed."""
    env = _env(workdir.parent / "claude-home")
    env.update(_claude_env(gateway, model), CLAUDE_CONFIG_DIR=env["HOME"] + "/.claude")
    command = [cli("claude"), "-p", prompt, "--model", model, "--output-format", "stream-json", "--verbose"]
    command += ["--include-partial-messages", *(["--allowedTools", ",".join(tools)] if tools else [])]
    return _run(command, env, workdir)


def run_codex(gateway: Gateway, model: str, prompt: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """``codex exec PROMPT`` with the config.toml of the docs (``llmplex serve`` as its model provider)."""
    env = _env(workdir.parent / "codex-home")
    config = recipe("codex-config").replace("http://127.0.0.1:4000", gateway.url)
    config = config.replace('model = "anthropic:claude-sonnet-4-6"', f"model = {json.dumps(model)}")
    assert f"model = {json.dumps(model)}" in config and gateway.url in config
    (Path(env["HOME"]) / "config.toml").write_text(config, encoding="utf-8")
    env.update(CODEX_HOME=env["HOME"], LLMPLEX_API_KEY=MASTER_KEY)
    return _run([cli("codex"), "exec", "--skip-git-repo-check", prompt], env, workdir)


def _run(command: list[str], env: dict[str, str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """A CLI run non-interactively in ``workdir``: no standard input, its output captured, at most _TIMEOUT s."""
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
