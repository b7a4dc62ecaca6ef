"""The local-model runtime against the real llama.cpp server and the small Gemma 3 270M model (fast to start).

One server is started for the module and shared; the tests that kill or stop
servers come last. Everything lives in a temporary cache dir.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from llmplex_llamacpp import server as server_module
from llmplex_llamacpp.errors import LocalModelError
from llmplex_llamacpp.model_files import CACHE_DIR_ENV, SMALL_MODEL, resolve_model
from llmplex_llamacpp.server import LocalServer, start_persistent, status, stop_persistent
from llmplex_llamacpp.server import _pid_alive as pid_alive

REQUIRED = {"xllamacpp": "xllamacpp", "openai": "openai"}
PLUGIN_SRC = Path(server_module.__file__).resolve().parents[1]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private cache dir (models, logs, state) for the whole module."""
    for module, dist in REQUIRED.items():
        try:
            importlib.import_module(module)
        except ImportError:
            pytest.fail(f"{module} is not installed: pip install {dist} (or pip install -e plugins/llamacpp)")
    path = tmp_path_factory.mktemp("llmplex-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(path))
        yield path
        stop_persistent()


@pytest.fixture(autouse=True)
def use_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every test at the module's cache (the shared conftest clears LLMPLEX_* per test)."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))


@pytest.fixture
def server(cache: Path) -> LocalServer:
    """The shared server: started by the first test that needs it, then reused."""
    return LocalServer.for_model(SMALL_MODEL, start_timeout=60)


def run_python(code: str, cache: Path) -> dict[str, object]:
    """Run `code` in a fresh interpreter; it prints one JSON object last."""
    env = {**os.environ, CACHE_DIR_ENV: str(cache)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PLUGIN_SRC), env.get("PYTHONPATH")) if p)
    command = [sys.executable, "-c", code]
    done = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- model resolution -------------------------------------------------------


def test_named_model_is_assembled_once_then_cached(cache: Path) -> None:
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(resolve_model(SMALL_MODEL))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    path = results[0]
    assert results == [path, path]
    assert path.parent == cache / "models"
    assert path.stat().st_size == 253_113_024
    stamp = path.stat().st_mtime_ns
    assert resolve_model("gemma3") == path
    assert path.stat().st_mtime_ns == stamp
    assert not list(path.parent.glob("*.partial"))


def test_gguf_path_resolves_to_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "my-model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.chdir(tmp_path)
    assert resolve_model("my-model.gguf") == model.resolve()
    assert resolve_model(model) == model.resolve()


def test_missing_gguf_path_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(LocalModelError, match="does not exist") as info:
        resolve_model(missing)
    assert str(missing) in str(info.value)


def test_unknown_model_name_is_a_clear_error() -> None:
    with pytest.raises(LocalModelError, match=r"unknown local model 'llama9'.*gemma3-270m.*\.gguf"):
        resolve_model("llama9")


# --- one shared server ------------------------------------------------------


def test_server_is_healthy_and_reused(server: LocalServer) -> None:
    assert server.owned
    assert server.base_url.startswith("http://127.0.0.1:")
    assert httpx.get(f"{server.base_url}/health").json() == {"status": "ok"}
    assert LocalServer.for_model("gemma3") is server
    assert server.log_path.exists()


def test_server_uses_gemma_template_and_context(server: LocalServer) -> None:
    props = httpx.get(f"{server.base_url}/props").json()
    assert props["default_generation_settings"]["n_ctx"] == 4096
    prompt = httpx.post(
        f"{server.base_url}/apply-template",
        json={"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]},
    ).json()["prompt"]
    assert (
        prompt
        == "<start_of_turn>user\nBe brief.<end_of_turn>\n<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"
    )


def test_chat_completions_through_openai_sdk(server: LocalServer) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server.openai_base_url, api_key="unused", max_retries=0)
    response = client.chat.completions.create(
        model="gemma3-270m", messages=[{"role": "user", "content": "Say hi"}], max_tokens=5
    )
    assert response.choices[0].finish_reason == "length"
    assert response.usage is not None
    assert response.usage.completion_tokens == 5


def test_tool_calls_come_back_parsed(server: LocalServer) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server.openai_base_url, api_key="unused", max_retries=0)
    response = client.chat.completions.create(
        model="gemma3-270m",
        messages=[{"role": "user", "content": "Use the add tool on 7 and 5."}],
        tools=[ADD_TOOL],  # type: ignore[list-item]
        temperature=0,
        max_tokens=40,
    )
    calls = response.choices[0].message.tool_calls
    assert calls, response.choices[0].message
    first = calls[0]
    assert first.type == "function"
    assert first.function.name == "add"
    assert set(json.loads(first.function.arguments)) == {"a", "b"}


def test_responses_endpoint_answers(server: LocalServer) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server.openai_base_url, api_key="unused", max_retries=0)
    response = client.responses.create(model="gemma3-270m", input="Say hi", max_output_tokens=5)
    assert response.usage is not None
    assert response.usage.output_tokens == 5
    assert response.output[0].type == "message"


def test_anthropic_messages_endpoint_answers(server: LocalServer) -> None:
    body = {"model": "gemma3-270m", "max_tokens": 5, "messages": [{"role": "user", "content": "Say hi"}]}
    reply = httpx.post(f"{server.base_url}/v1/messages", json=body, timeout=30).json()
    assert reply["type"] == "message"
    assert reply["stop_reason"] == "max_tokens"
    assert reply["content"][0]["type"] == "text"
    assert reply["usage"]["output_tokens"] == 5


def test_too_long_prompt_is_a_400(server: LocalServer) -> None:
    body = {"messages": [{"role": "user", "content": "word " * 5000}], "max_tokens": 5}
    reply = httpx.post(f"{server.openai_base_url}/chat/completions", json=body, timeout=30)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["type"] == "exceed_context_size_error"
    assert error["n_ctx"] == 4096


# --- failures, persistence, stopping (these start their own servers) ---------


def test_broken_model_fails_with_log_path(cache: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file" * 100)
    with pytest.raises(LocalModelError, match="exited with code") as info:
        LocalServer.for_model(broken, start_timeout=30)
    assert str(cache / "logs") in str(info.value)


def test_persistent_server_outlives_the_process_that_started_it(cache: Path) -> None:
    started = run_python(
        "import json; from llmplex_llamacpp.server import start_persistent as s; r = s('gemma3-270m');"
        "print(json.dumps({'state': r.state, 'pid': r.pid, 'port': r.port}))",
        cache,
    )
    assert started["state"] == "running"
    pid = started["pid"]
    assert isinstance(pid, int)
    assert pid_alive(pid)
    seen = run_python(
        "import json; from llmplex_llamacpp.server import LocalServer, status, stop_persistent;"
        "st = status(); srv = LocalServer.for_model('gemma3-270m'); stopped = stop_persistent();"
        "print(json.dumps({'state': st.state, 'pid': st.pid, 'reused_pid': srv.pid, 'owned': srv.owned,"
        " 'stopped': stopped.state}))",
        cache,
    )
    assert seen == {"state": "running", "pid": pid, "reused_pid": pid, "owned": False, "stopped": "stopped"}
    assert status().state == "stopped"
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)


def test_killed_persistent_server_is_reported_stale(cache: Path) -> None:
    started = start_persistent(SMALL_MODEL, timeout=60)
    assert started.pid is not None
    assert start_persistent(SMALL_MODEL).pid == started.pid
    os.kill(started.pid, signal.SIGKILL)
    for _ in range(100):  # SIGKILL is asynchronous: wait until the process is really gone
        if not pid_alive(started.pid):
            break
        time.sleep(0.05)
    stale = status()
    assert stale.state == "stale"
    assert "is gone" in stale.detail
    assert stop_persistent().state == "stopped"
    assert status().state == "stopped"


def test_killed_owned_server_is_detected_and_replaced(server: LocalServer) -> None:
    os.kill(server.pid, signal.SIGKILL)
    assert not server.is_alive()
    replacement = LocalServer.for_model(SMALL_MODEL, start_timeout=60)
    assert replacement is not server
    assert replacement.is_alive()
    replacement.stop()
    assert not pid_alive(replacement.pid)
    assert not replacement.is_alive()
