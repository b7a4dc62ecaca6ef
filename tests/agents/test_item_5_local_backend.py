"""Issue 32 item 5: the local model as an agent's backend, as configured (the timings are bench/local_agent.py's;
tests/agents/test_item_4_local_model.py runs Claude Code on it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from llmplex_llamacpp import serve
from llmplex_llamacpp.local_clients import LocalClients
from llmplex_llamacpp.server import LocalServer
from llmplex_llamacpp.settings import AGENT_N_CTX, LlamaCppSettings

import llmplex

CLAUDE_CODE_FIRST_PROMPT = 20_000
"""About the tokens of Claude Code's first request (its system prompt and 24 tools), the largest agent prompt."""


def test_item_5_an_agents_first_prompt_fits_the_default_context_with_room_to_answer() -> None:
    assert LlamaCppSettings().n_ctx == AGENT_N_CTX >= CLAUDE_CODE_FIRST_PROMPT + 8192


def test_item_5_a_server_the_plugin_starts_gets_that_context(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, Any]] = []

    def for_model(model: str, **options: Any) -> LocalServer:
        asked.append(options)
        raise RuntimeError("not started in this test")

    monkeypatch.setattr(LocalServer, "for_model", for_model)
    with pytest.raises(RuntimeError, match="not started"):
        LocalClients(LlamaCppSettings()).server("qwen2.5-coder-1.5b")
    assert asked[0]["n_ctx"] == AGENT_N_CTX
    configured = llmplex.Client(providers={"llamacpp": {"n_ctx": 4096}}).route("llamacpp:x").provider.settings
    assert configured.n_ctx == 4096  # a config still chooses its own


def test_item_5_the_server_reads_prompts_with_every_cpu_and_keeps_its_prompt_cache(tmp_path: Path) -> None:
    args = serve._parse_args(["--model", str(tmp_path / "m.gguf"), "--ready-file", str(tmp_path / "r.json")])
    assert args.batch_threads == (os.cpu_count() or 2) and args.threads == max(1, (os.cpu_count() or 2) // 2)
    assert (args.batch, args.ubatch) == (2048, 512)  # llama.cpp's own: bench/local_agent.py measured 256 slower
    import xllamacpp

    assert xllamacpp.CommonParams().cache_prompt  # serve.main leaves it on: a second turn reads only what is new


def test_item_5_nonsense_server_settings_are_refused_by_the_command_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        serve._parse_args(["--model", str(tmp_path / "m.gguf"), "--ready-file", "r", "--ubatch", "many"])
