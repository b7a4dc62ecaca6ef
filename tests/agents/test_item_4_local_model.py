"""Issue 32 items 4-6 on the real local model (llama.cpp, a GGUF model from PyPI): slow, so few.

Claude Code answers one streamed turn from the default local model through the gateway (its own system prompt
and tool list cut down, so that the prompt is read in minutes on a loaded machine: the full prompt, some 20,000
tokens, is bench/local_agent.py's business); ``count_tokens`` of the local model is its own tokenizer's count, equal to
what the model then reports; the quickstart's key example works on a local model.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import pytest

from tests.agents.real_cli import cli
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config, running_gateway
from tests.gateway.keyed_support import bearer, chat, running_keyed

try:
    from llmplex_llamacpp.catalogue import DEFAULT_MODEL
    from llmplex_llamacpp.server import LocalServer
    from llmplex_llamacpp.settings import AGENT_N_CTX
except ImportError as exc:  # pragma: no cover - the message is the point
    raise RuntimeError("these tests need the local model plugin: pip install -e plugins/llamacpp") from exc

pytestmark = pytest.mark.xdist_group("local-model")  # with tests/live: one model server generating at a time

MODEL = f"llamacpp:{DEFAULT_MODEL}"
"""The quickstart's model, and an instruct model: it ends its answers (the small base model never does)."""
QUICKSTART = (Path(__file__).resolve().parents[2] / "docs" / "gateway" / "quickstart.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def local() -> LocalServer:
    """The default local model's server, with the context the plugin gives agents, started once here."""
    return LocalServer.for_model(DEFAULT_MODEL, n_ctx=AGENT_N_CTX, start_timeout=600)


@pytest.fixture
def gateway(local: LocalServer) -> Iterator[Gateway]:
    with running_gateway(gateway_config(timeout=600, gateway={"models": [MODEL]})) as running:
        yield running


def test_item_1_count_tokens_of_the_local_model_is_what_it_then_reads(gateway: Gateway) -> None:
    client = anthropic.Anthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0, timeout=600)
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Name three colours. " * 12}]
    counted = client.messages.with_raw_response.count_tokens(model=MODEL, system="Be brief.", messages=messages)
    assert counted.headers["x-llmplex-token-count"] == "tokenizer"
    read = client.messages.create(model=MODEL, max_tokens=1, system="Be brief.", messages=messages)
    assert abs(counted.parse().input_tokens - read.usage.input_tokens) <= 0.02 * read.usage.input_tokens


def test_item_4_claude_code_streams_one_turn_from_the_local_model(gateway: Gateway, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "DISABLE_AUTOUPDATER": "1"}
    env |= {"ANTHROPIC_BASE_URL": gateway.url, "ANTHROPIC_API_KEY": MASTER_KEY, "PATH": "/usr/bin:/bin"}
    env |= {"ANTHROPIC_SMALL_FAST_MODEL": MODEL, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    env |= {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "200"}
    command = [cli("claude"), "-p", "Say hello", "--model", MODEL, "--output-format", "stream-json", "--verbose"]
    command += ["--system-prompt", "You are a helpful assistant. Answer in one short sentence.", "--tools", ""]

    done = subprocess.run(
        command,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    result = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")][-1]
    assert result["type"] == "result" and result["subtype"] == "success" and result["result"].strip()
    records = [r for r in gateway.recorder.records if r.endpoint == "messages"]
    assert records and all(r.status == 200 and r.provider == "llamacpp" for r in records)
    assert any(r.stream for r in records)


def test_item_6_the_quickstarts_key_example_works_on_a_local_model(local: LocalServer) -> None:
    line = next(line for line in QUICKSTART.splitlines() if "llmplex keys create" in line)
    assert "--budget-usd 5 --budget-period 30d" in line  # the example this test repeats
    with running_keyed(gateway_config(timeout=600, gateway={"key_cache_seconds": 0})) as gateway:
        key = gateway.create_key("notebook", budget_usd="5", budget_period="30d")
        answer = httpx.post(
            gateway.url + "/v1/chat/completions", json=chat(MODEL, max_tokens=2), headers=bearer(key), timeout=600
        )
    assert answer.status_code == 200, answer.text
