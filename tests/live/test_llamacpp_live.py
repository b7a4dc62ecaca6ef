"""End to end through llmplex against the real local models: the default for what a user does, the small one for
process handling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from llmplex_llamacpp.model_files import DEFAULT_MODEL, SMALL_MODEL, resolve_model
from llmplex_llamacpp.server import LocalServer
from pydantic import BaseModel, Field

import llmplex
from tests.live.conftest import LOCAL_MODEL


def test_text_completion(live_client: llmplex.Client) -> None:
    response = live_client.complete(LOCAL_MODEL, "Say hello to the reader.", max_tokens=8, temperature=0)
    assert isinstance(response.text, str)
    assert response.text
    assert response.provider == "llamacpp"
    assert response.finish_reason in {"stop", "length"}
    assert response.usage.input_tokens > 0
    assert 0 < response.usage.output_tokens <= 8
    assert response.response_id


def test_max_tokens_truncates_with_length(live_client: llmplex.Client) -> None:
    response = live_client.complete(LOCAL_MODEL, "Count from one to one hundred.", max_tokens=5, temperature=0)
    assert response.finish_reason == "length"
    assert response.usage.output_tokens == 5


def test_stream_deltas_assemble_into_the_final_response(live_client: llmplex.Client) -> None:
    events = list(live_client.stream(LOCAL_MODEL, "Tell a story.", max_tokens=12, temperature=0))
    deltas = [e.text for e in events if e.type == "text"]
    final = events[-1].response
    assert len(deltas) > 1
    assert final is not None
    assert final.text == "".join(deltas)
    assert final.usage.output_tokens == 12
    assert final.finish_reason == "length"


async def test_async_completion_and_stream(live_client: llmplex.Client) -> None:
    response = await live_client.acomplete(LOCAL_MODEL, "Hi", max_tokens=4, temperature=0)
    assert response.usage.output_tokens == 4
    events = [e async for e in live_client.astream(LOCAL_MODEL, "Hi", max_tokens=4, temperature=0)]
    assert events[-1].response is not None
    assert events[-1].response.usage.output_tokens == 4


class City(BaseModel):
    name: str = Field(max_length=24)
    country: str = Field(max_length=24)


def test_structured_output_with_the_servers_json_schema_grammar(live_client: llmplex.Client) -> None:
    response = live_client.complete(
        LOCAL_MODEL, "What is the capital of France? Answer as JSON.", output=City, max_tokens=120, temperature=0
    )
    assert isinstance(response.output, City)
    assert response.output.name.lower() == "paris"


ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def test_tool_call_round_trip(live_client: llmplex.Client) -> None:
    prompt = "What is 7 plus 5? Use the add tool."
    first = live_client.complete(LOCAL_MODEL, prompt, tools=[ADD_TOOL], temperature=0, max_tokens=60)
    assert first.tool_calls, f"the model made no tool call; it said {first.text!r}"
    assert first.finish_reason == "tool_calls"
    call = first.tool_calls[0]
    assert call.name == "add"
    assert call.parsed_arguments() == {"a": 7, "b": 5}
    result = llmplex.Message.tool(call.id, "12", name="add")
    conversation = [llmplex.Message.user(prompt), first.message(), result]
    second = live_client.complete(LOCAL_MODEL, conversation, tools=[ADD_TOOL], temperature=0, max_tokens=30)
    assert not second.tool_calls
    assert "12" in second.text
    assert second.usage.input_tokens > first.usage.input_tokens


def test_prompt_longer_than_the_context_is_a_bad_request(live_client: llmplex.Client) -> None:
    with pytest.raises(llmplex.LLMBadRequestError) as info:
        live_client.complete(LOCAL_MODEL, "word " * 6000, max_tokens=5)
    assert info.value.status_code == 400
    assert "context" in str(info.value)
    assert info.value.attempts == 1


@pytest.mark.parametrize("prefix", ["localchat", "localresp"])
def test_both_openai_apis_on_the_local_server(live_client: llmplex.Client, prefix: str) -> None:
    response = live_client.complete(f"{prefix}:{DEFAULT_MODEL}", "Hello", max_tokens=6, temperature=0)
    assert response.provider == prefix
    assert response.text
    assert response.usage.output_tokens == 6
    events = list(live_client.stream(f"{prefix}:{DEFAULT_MODEL}", "Hello", max_tokens=6, temperature=0))
    assert events[-1].response is not None
    assert events[-1].response.text == "".join(e.text for e in events if e.type == "text")


def test_a_killed_server_is_a_connection_error(tmp_path: Path) -> None:
    twin = tmp_path / "twin.gguf"
    os.link(resolve_model(SMALL_MODEL), twin)  # another path, so another server we may kill
    server = LocalServer.for_model(str(twin), n_ctx=512)
    client = llmplex.Client(
        providers={"victim": {"plugin": "openai", "base_url": server.openai_base_url, "api": "chat"}},
        throttle={"max_attempts": 2, "base_delay": 0.01},
    )
    assert client.complete("victim:m", "Hi", max_tokens=2).usage.output_tokens == 2
    server.stop()
    with pytest.raises(llmplex.LLMConnectionError) as info:
        client.complete("victim:m", "Hi", max_tokens=2)
    assert info.value.attempts == 2
    assert info.value.retryable


def test_cli_answers_from_the_default_local_model(local_server: LocalServer) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "llmplex", "complete", "--max-tokens", "5", "Write a haiku"],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_cli_local_start_status_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPLEX_CACHE_DIR", str(tmp_path / "cache"))
    os.makedirs(tmp_path / "cache" / "models")
    os.link(resolve_model(SMALL_MODEL), tmp_path / "model.gguf")

    def llmplex_cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "llmplex", "local", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=180)

    assert llmplex_cli("status").returncode == 1
    started = llmplex_cli("start", "-m", str(tmp_path / "model.gguf"), "--n-ctx", "512")
    assert started.returncode == 0, started.stderr
    try:
        running = llmplex_cli("status")
        assert running.returncode == 0
        assert "running" in running.stdout
    finally:
        stopped = llmplex_cli("stop")
    assert stopped.returncode == 0
    assert llmplex_cli("status").returncode == 1


@pytest.mark.parametrize("prefix", ["llamacpp", "localchat"])
def test_async_calls_from_separate_event_loops(live_client: llmplex.Client, prefix: str) -> None:
    import asyncio

    model = f"{prefix}:{DEFAULT_MODEL}"
    first = asyncio.run(live_client.acomplete(model, "Hi", max_tokens=2, temperature=0))
    second = asyncio.run(live_client.acomplete(model, "Hi again", max_tokens=2, temperature=0))
    assert first.usage.output_tokens == second.usage.output_tokens == 2
