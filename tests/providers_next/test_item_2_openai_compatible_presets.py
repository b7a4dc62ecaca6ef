"""Issue 26 item 2: OpenAI-compatible providers as presets (data plus small hooks over the openai plugin).

Faked at the HTTP layer under the official openai SDK: the kit's local server (or respx for the documented
default URLs), answering with payloads shaped like each provider's API reference.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from llmplex_openai_compatible.presets import PRESETS
from llmplex_openai_compatible.quirks import alnum9

import llmplex
from llmplex.errors import LLMAuthenticationError, LLMConfigurationError
from llmplex.testing import Answer, OpenAIChatWire, Reply, WireServer, sse
from llmplex.types import Message, ToolCall

REMOTE = {name: p for name, p in PRESETS.items() if not p.local}
LOCAL = {name: p for name, p in PRESETS.items() if p.local}
KEY = "sk-preset-7d1e2f3a4b5c6d7e8f90"
WIRE = OpenAIChatWire()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for preset in PRESETS.values():
        if preset.key_env:
            monkeypatch.delenv(preset.key_env, raising=False)
    for name in ("OPENAI_API_KEY", "CEREBRAS_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _client(**providers: dict[str, Any]) -> llmplex.Client:
    return llmplex.Client(providers=providers, throttle={"max_attempts": 1})


def _answer(text: str = "Bonjour", **extra: Any) -> dict[str, Any]:
    body = WIRE.response(Reply(text=text, model="m", response_id="cmpl-1"))
    body["choices"][0]["message"].update(extra)
    return body


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_item_2_each_preset_reaches_its_documented_url_with_its_own_key_variable(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = REMOTE[name]
    assert preset.key_env is not None
    monkeypatch.setenv(preset.key_env, KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-be-sent")
    with respx.mock(assert_all_called=True) as router:
        route = router.post(f"{preset.base_url}/chat/completions").mock(httpx.Response(200, json=_answer()))
        response = _client().complete(f"{name}:some-model", "Hi")
    assert (response.text, response.provider) == ("Bonjour", name)
    sent = route.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = httpx.Response(200, content=sent.content).json()
    assert body["model"] == "some-model" and "max_completion_tokens" not in body


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_item_2_a_missing_key_is_a_config_error_naming_the_variable(name: str, server: WireServer) -> None:
    preset = REMOTE[name]
    with pytest.raises(LLMConfigurationError, match=re.escape(str(preset.key_env))):
        _client().complete(f"{name}:m", "Hi")
    # an extra instance of the preset gets no key from the preset's variable: it says what to set instead
    with pytest.raises(LLMConfigurationError, match="api_key"):
        _client(mine={"plugin": name}).complete("mine:m", "Hi")
    assert server.received == []


def test_item_2_an_extra_instance_never_receives_the_presets_key(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)
    server.push(Answer.json(200, _answer()))
    _client(eu={"plugin": "mistral", "base_url": server.url + "/v1", "api_key": "other-key"}).complete("eu:m", "Hi")
    assert server.received[0].headers["authorization"] == "Bearer other-key"


@pytest.mark.parametrize("name", sorted(LOCAL))
def test_item_2_local_servers_need_no_key_and_default_to_their_local_url(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = LOCAL[name]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", preset.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-be-sent")
    with respx.mock(assert_all_called=True) as router:
        route = router.post(f"{preset.base_url}/chat/completions").mock(httpx.Response(200, json=_answer()))
        assert _client().complete(f"{name}:qwen3", "Hi").text == "Bonjour"
    assert "sk-openai" not in route.calls.last.request.headers["authorization"]
    assert llmplex.Client().router.instance(name).settings.problems() == []


def test_item_2_base_url_and_api_key_override_the_preset(server: WireServer) -> None:
    server.push(Answer.json(200, _answer()))
    client = _client(groq={"base_url": server.url + "/v1", "api_key": KEY})
    assert client.complete("groq:llama", "Hi").text == "Bonjour"
    (received,) = server.received
    assert (received.path, received.headers["authorization"]) == ("/v1/chat/completions", f"Bearer {KEY}")


def test_item_2_mistral_sends_9_character_tool_call_ids_and_its_own_seed_name(server: WireServer) -> None:
    server.push(Answer.json(200, _answer("Sunny")))
    call = ToolCall(id="call_unLAR8MvFNptuiZK6K6HCy5k", name="weather", arguments='{"city": "Paris"}')
    messages = [Message.user("Weather?"), Message.assistant(tool_calls=(call,)), Message.tool(call.id, "21C")]
    client = _client(mistral={"base_url": server.url + "/v1", "api_key": KEY})
    client.complete("mistral:mistral-small-latest", messages, seed=7)
    body = server.received[0].json()
    sent_id = body["messages"][1]["tool_calls"][0]["id"]
    assert re.fullmatch(r"[A-Za-z0-9]{9}", sent_id) and body["messages"][2]["tool_call_id"] == sent_id
    assert sent_id == alnum9(call.id) and alnum9("D681PevKs") == "D681PevKs"  # Mistral's own ids stay
    assert body["random_seed"] == 7 and "seed" not in body and "stream_options" not in body


@pytest.mark.parametrize(
    ("model", "options", "refused"),
    [
        ("deepseek:deepseek-chat", {"seed": 1}, "seed"),
        ("deepseek:deepseek-reasoner", {"temperature": 0.2}, "temperature"),
        ("xai:grok-4", {"presence_penalty": 0.5}, "presence_penalty"),
        ("xai:grok-3-mini", {"stop": ["END"]}, "stop"),
        ("mistral:mistral-large-latest", {"reasoning_effort": "high"}, "reasoning_effort"),
        ("groq:llama", {"provider_options": {"logprobs": True}}, "logprobs"),
        ("groq:llama", {"provider_options": {"n": 2}}, "'n'"),
    ],
)
def test_item_2_unsupported_parameters_are_refused_by_name_before_anything_is_sent(
    server: WireServer, model: str, options: dict[str, Any], refused: str
) -> None:
    prefix = model.partition(":")[0]
    client = _client(**{prefix: {"base_url": server.url + "/v1", "api_key": KEY}})
    with pytest.raises(LLMConfigurationError, match=refused):
        client.complete(model, "Hi", **options)
    assert server.received == []


def test_item_2_what_a_model_family_takes_still_reaches_the_wire(server: WireServer) -> None:
    server.push(Answer.json(200, _answer()), Answer.json(200, _answer()))
    client = _client(xai={"base_url": server.url + "/v1", "api_key": KEY}, groq={"base_url": server.url + "/v1"})
    client.complete("xai:grok-2", "Hi", presence_penalty=0.5)
    assert server.received[0].json()["presence_penalty"] == 0.5
    client.complete("groq:llama", "Hi", provider_options={"n": 1})
    assert server.received[1].json()["n"] == 1


def test_item_2_deepseek_reasoning_content_becomes_a_reasoning_part(server: WireServer) -> None:
    thinking = "9.11 < 9.8 because 0.11 < 0.8."
    server.push(Answer.json(200, _answer("9.8 is greater", reasoning_content=thinking)))
    client = _client(deepseek={"base_url": server.url, "api_key": KEY})
    response = client.complete("deepseek:deepseek-reasoner", "9.11 and 9.8, which is greater?")
    (part,) = response.reasoning
    assert (response.text, part.text, part.data) == ("9.8 is greater", thinking, {"reasoning_content": thinking})
    # the next turn: DeepSeek answers 400 when reasoning_content is sent back, so it is left out
    server.push(Answer.json(200, _answer("Three")))
    client.complete("deepseek:deepseek-reasoner", [Message.user("Hi"), response.message(), Message.user("More?")])
    assert "reasoning_content" not in server.received[1].body.decode()


def _deepseek_stream() -> list[bytes]:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "deepseek-reasoner"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    return [
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chunk({"content": None, "reasoning_content": "Compare "}),
        chunk({"content": None, "reasoning_content": "decimals."}),
        chunk({"content": "9.8", "reasoning_content": None}),
        chunk({"content": ""}, "stop"),
        sse({**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}}),
        sse("[DONE]"),
    ]


def test_item_2_deepseek_reasoning_content_streams_as_reasoning_events(server: WireServer) -> None:
    server.push(Answer.stream(_deepseek_stream()), Answer.stream(_deepseek_stream()))
    client = _client(deepseek={"base_url": server.url, "api_key": KEY})
    events = list(client.stream("deepseek:deepseek-reasoner", "Which is greater?"))
    assert "".join(e.text for e in events if e.type == "reasoning") == "Compare decimals."
    assert [e.reasoning.text for e in events if e.reasoning] == ["Compare decimals."]
    assert "".join(e.text for e in events if e.type == "text") == "9.8"
    final = events[-1].response
    assert final is not None and [p.data for p in final.reasoning] == [{"reasoning_content": "Compare decimals."}]

    async def astream() -> list[str]:
        return [e.text async for e in client.astream("deepseek:deepseek-reasoner", "Again?") if e.type == "reasoning"]

    assert "".join(asyncio.run(astream())) == "Compare decimals."


def test_item_2_openrouter_sends_its_routing_headers_and_provider_routing(server: WireServer) -> None:
    server.push(Answer.json(200, _answer(reasoning="Thinking about it.")))
    settings = {
        "base_url": server.url + "/api/v1",
        "api_key": KEY,
        "app_url": "https://myapp.example.com",
        "app_title": "My App",
        "provider_routing": {"order": ["anthropic", "openai"], "allow_fallbacks": False},
    }
    response = _client(openrouter=settings).complete("openrouter:anthropic/claude-sonnet-4.5", "Hi")
    (received,) = server.received
    assert received.headers["http-referer"] == "https://myapp.example.com"
    assert received.headers["x-title"] == "My App"
    assert received.json()["provider"] == {"order": ["anthropic", "openai"], "allow_fallbacks": False}
    assert response.reasoning[0].data == {"reasoning": "Thinking about it."}


def test_item_2_a_provider_added_in_config_alone(server: WireServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEREBRAS_API_KEY", KEY)
    table = {
        "plugin": "openai-compatible",
        "base_url": server.url + "/v1",
        "api_key_env": "CEREBRAS_API_KEY",
        "unsupported_options": ["frequency_penalty"],
        "refused_fields": ["logit_bias"],
        "tool_call_ids": "alnum9",
        "headers": {"X-Team": "research"},
    }
    client = _client(cerebras=table)
    with pytest.raises(LLMConfigurationError, match="frequency_penalty"):
        client.complete("cerebras:llama-4-scout", "Hi", frequency_penalty=0.1)
    with pytest.raises(LLMConfigurationError, match="logit_bias"):
        client.complete("cerebras:llama-4-scout", "Hi", provider_options={"logit_bias": {"1": 2}})
    server.push(Answer.json(200, _answer()))
    assert client.complete("cerebras:llama-4-scout", "Hi").provider == "cerebras"
    (received,) = server.received
    assert (received.headers["authorization"], received.headers["x-team"]) == (f"Bearer {KEY}", "research")
    with pytest.raises(LLMConfigurationError, match="base_url"):
        _client(bare={"plugin": "openai-compatible"}).complete("bare:m", "Hi")
    with pytest.raises(LLMConfigurationError, match="unknown option"):
        _client(bad={"plugin": "openai-compatible", "unsupported_options": ["temprature"]}).complete("bad:m", "Hi")


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_item_2_a_key_echoing_server_never_shows_the_key(server: WireServer, name: str) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error",
                      "param": None, "code": "invalid_api_key"}}  # fmt: skip
    server.push(Answer.json(401, echo, {"x-echo": KEY}))
    client = _client(**{name: {"base_url": server.url + "/v1", "api_key": KEY}})
    with pytest.raises(LLMAuthenticationError) as caught:
        client.complete(f"{name}:m", "Hi")
    error = caught.value
    shown = " ".join([str(error), repr(error), repr(error.cause), str(error.response_body)])
    assert KEY not in shown
    assert KEY not in repr(client.router.instance(name).settings)


def test_item_2_ollama_models_lists_what_is_pulled(server: WireServer) -> None:
    tags = {
        "models": [
            {
                "name": "llama3.2:latest",
                "model": "llama3.2:latest",
                "modified_at": "2025-05-04T17:37:44.706015396-07:00",
                "size": 2019393189,
                "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "llama",
                    "families": ["llama"],
                    "parameter_size": "3.2B",
                    "quantization_level": "Q4_K_M",
                },
            },
            {"name": "deepseek-r1:7b", "model": "deepseek-r1:7b", "size": 4683075271, "details": {}},
        ]
    }
    server.push(Answer.json(200, tags))
    models = _client(ollama={"base_url": server.url + "/v1"}).models("ollama")
    assert [m.id for m in models] == ["deepseek-r1:7b", "llama3.2:latest"]
    assert "3.2B" in models[1].description and "Q4_K_M" in models[1].description
    assert server.received[0].path == "/api/tags"
    # an older server without /api/tags: its /v1/models
    server.push(Answer.json(404, {"error": "not found"}))
    server.push(Answer.json(200, {"object": "list", "data": [{"id": "qwen3", "object": "model", "owned_by": "library",
                                                             "created": 1}]}))  # fmt: skip
    assert [m.id for m in _client(ollama={"base_url": server.url + "/v1"}).models("ollama", refresh=True)] == ["qwen3"]


def test_item_2_llmplex_models_ollama_lists_the_pulled_models_on_the_command_line(
    server: WireServer, tmp_path: Any
) -> None:
    from tests.support.cli import run_llmplex

    tags = {"models": [{"name": "qwen3:8b", "model": "qwen3:8b", "size": 5225387923, "details": {
        "format": "gguf", "family": "qwen3", "parameter_size": "8.2B", "quantization_level": "Q4_K_M"}}]}  # fmt: skip
    server.push(Answer.json(200, tags), Answer.json(200, tags))
    env = {"LLMPLEX_PROVIDERS__OLLAMA__BASE_URL": server.url + "/v1"}
    table = run_llmplex("models", "ollama", cwd=tmp_path, env=env)
    assert table.returncode == 0 and "qwen3:8b" in table.stdout, table.stderr
    listed = json.loads(run_llmplex("models", "ollama", "--json", cwd=tmp_path, env=env).stdout)
    assert [(m["id"], "8.2B" in m["description"]) for m in listed] == [("qwen3:8b", True)]
    assert [r.path for r in server.received] == ["/api/tags", "/api/tags"]


def _embeddings(count: int, model: str) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": [0.1 * (i + 1), -0.2]} for i in reversed(range(count))]
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 7, "total_tokens": 7}}


def test_item_2_presets_with_embeddings_embed_and_mistral_defaults_to_mistral_embed(server: WireServer) -> None:
    server.push(Answer.json(200, _embeddings(2, "mistral-embed")), Answer.json(200, _embeddings(1, "nomic-embed-text")))
    client = _client(mistral={"base_url": server.url + "/v1", "api_key": KEY}, ollama={"base_url": server.url + "/v1"})
    result = client.embed("mistral:", ["one", "two"])
    assert result.vectors == [[0.1, -0.2], [0.2, -0.2]] and result.model == "mistral-embed"
    assert server.received[0].path == "/v1/embeddings" and server.received[0].json()["model"] == "mistral-embed"

    async def local() -> list[list[float]]:
        return (await client.aembed("ollama:nomic-embed-text", "three")).vectors

    assert asyncio.run(local()) == [[0.1, -0.2]]
    with pytest.raises(LLMConfigurationError, match="embed"):
        _client(groq={"base_url": server.url + "/v1"}).embed("groq:some-model", "no embeddings at Groq")
