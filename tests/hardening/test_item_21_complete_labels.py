"""Issue 12 item 21: `llmplex complete` says on stderr which model answered and when max_tokens cut the answer;
a local model is named by its short name, not the server's full .gguf path (Response.model too)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import respx
from llmplex_llamacpp.local_clients import LocalClients
from llmplex_llamacpp.model_files import DEFAULT_MODEL

import llmplex
from llmplex.testing.http import sse_response
from tests.contract import fixtures_openai as wire
from tests.support.cli import run_llmplex

LOCAL_URL = "http://127.0.0.1:8997/v1"
SERVED_PATH = "/home/someone/.cache/llmplex/models/qwen2.5-0.5b-instruct-q4_k_m-0123456789ab.gguf"


def test_item_21_complete_names_the_model_on_stderr_and_keeps_stdout_the_answer(tmp_path: Path) -> None:
    result = run_llmplex("complete", "-m", "mock:echo", "hello there", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    assert "mock:echo" in result.stderr
    assert "max_tokens" not in result.stderr  # not cut


def test_item_21_complete_says_when_max_tokens_cut_the_answer(tmp_path: Path) -> None:
    result = run_llmplex("complete", "-m", "mock:echo", "--max-tokens", "2", "one two three four", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "one two\n"
    assert "mock:echo" in result.stderr
    assert "cut" in result.stderr and "max_tokens" in result.stderr and "--max-tokens" in result.stderr
    as_json = run_llmplex("complete", "-m", "mock:echo", "--max-tokens", "1", "--json", "a b", cwd=tmp_path)
    data = json.loads(as_json.stdout)  # --json: stdout stays one JSON document, which holds both
    assert as_json.returncode == 0 and data["model"] == "echo" and data["finish_reason"] == "length"


@pytest.fixture
def local_server(monkeypatch: pytest.MonkeyPatch) -> respx.MockRouter:
    """llama.cpp's server faked under the OpenAI SDK; like the real one it reports the model's full path."""
    monkeypatch.setattr(LocalClients, "server", lambda _, model, **kw: SimpleNamespace(openai_base_url=LOCAL_URL))
    with respx.mock(base_url=LOCAL_URL, assert_all_called=False) as router:
        yield router


@pytest.mark.parametrize(
    ("model", "short"),
    [
        (DEFAULT_MODEL, DEFAULT_MODEL),
        ("/models/qwen2.5-0.5b-instruct-q4_k_m.gguf", "qwen2.5-0.5b-instruct-q4_k_m.gguf"),
    ],
)
def test_item_21_llamacpp_response_model_is_a_short_name(
    local_server: respx.MockRouter, model: str, short: str
) -> None:
    local_server.post("/chat/completions").mock(
        return_value=httpx.Response(200, json=wire.chat_completion("Paris", model=SERVED_PATH))
    )
    response = llmplex.Client().complete(f"llamacpp:{model}", "Capital of France?")
    assert response.model == short


def test_item_21_llamacpp_streamed_response_model_is_a_short_name(local_server: respx.MockRouter) -> None:
    chunks = [
        wire.chat_chunk({"role": "assistant", "content": ""}, model=SERVED_PATH),
        wire.chat_chunk({"content": "Paris"}, model=SERVED_PATH),
        wire.chat_chunk({}, finish_reason="stop", model=SERVED_PATH),
    ]
    local_server.post("/chat/completions").mock(return_value=sse_response([*chunks, "[DONE]"]))
    events = list(llmplex.Client().stream("llamacpp:/m/tiny.gguf", "Capital of France?"))
    assert {e.model for e in events if e.model} == {"tiny.gguf"}
    assert events[-1].response is not None and events[-1].response.model == "tiny.gguf"
