"""Issue 16 item 1: llama.cpp takes images only where the model has a vision projector (``mmproj``).

Without one, an image is refused before a server is started or a request sent;
with one, the server is started with the projector and the image goes as a
Chat Completions ``image_url`` (respx in place of the local server).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import respx
from llmplex_llamacpp import serve, server
from llmplex_llamacpp.server import LocalServer

import llmplex
from llmplex import LLMConfigurationError
from tests.contract import fixtures_openai as fx
from tests.contract.openapi import validate_openai
from tests.multimodal.cases import CASE_IDS, CASES, CHAT_PARTS, PROMPT, make
from tests.plugins.openai.conftest import FakeAPI

BASE_URL = "http://127.0.0.1:8998/v1"
MODEL = "llamacpp:/models/vision-model.gguf"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Servers asked for (their keyword arguments); each answers at ``BASE_URL``."""
    calls: list[dict[str, Any]] = []

    def for_model(model: str, **kwargs: Any) -> SimpleNamespace:
        calls.append({"model": model, **kwargs})
        return SimpleNamespace(openai_base_url=BASE_URL)

    monkeypatch.setattr(LocalServer, "for_model", for_model)
    return calls


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as mocked:
        yield mocked


@pytest.fixture
def projector(tmp_path: Path) -> Path:
    path = tmp_path / "mmproj-vision-f16.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_without_a_projector_every_part_is_refused_before_a_server_starts(
    started: list[dict[str, Any]], router: respx.MockRouter, tmp_path: Path, kind: str, source: str
) -> None:
    llm = llmplex.Client(throttle={"max_attempts": 1})
    with pytest.raises(LLMConfigurationError, match=rf"provider 'llamacpp' cannot take {kind} parts.*text only"):
        llm.complete(MODEL, [PROMPT, make(kind, source, tmp_path)])
    assert started == []
    assert router.calls.call_count == 0


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_with_a_projector_images_go_as_image_url(
    started: list[dict[str, Any]], router: respx.MockRouter, projector: Path, tmp_path: Path, kind: str, source: str
) -> None:
    llm = llmplex.Client(providers={"llamacpp": {"mmproj": str(projector)}}, throttle={"max_attempts": 1})
    api = FakeAPI(router, BASE_URL)
    api.reply("/chat/completions", fx.chat_completion("An orange pixel."))
    part = make(kind, source, tmp_path)
    if kind != "image":
        with pytest.raises(LLMConfigurationError, match=rf"provider 'llamacpp' cannot take {kind} parts.*image"):
            llm.complete(MODEL, [PROMPT, part])
        assert api.requests == []
        return
    assert llm.complete(MODEL, [PROMPT, part]).text == "An orange pixel."
    (body,) = api.bodies
    validate_openai("CreateChatCompletionRequest", body)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": PROMPT}, CHAT_PARTS[kind, source]]}
    ]
    assert started[0]["mmproj"] == projector


def test_item_1_a_missing_projector_is_a_configuration_error(tmp_path: Path) -> None:
    llm = llmplex.Client(providers={"llamacpp": {"mmproj": str(tmp_path / "missing.gguf")}})
    with pytest.raises(LLMConfigurationError, match="mmproj"):
        llm.route(MODEL)


def test_item_1_the_server_is_started_with_the_projector(
    monkeypatch: pytest.MonkeyPatch, projector: Path, tmp_path: Path
) -> None:
    commands: list[list[str]] = []

    class Spawned(Exception):
        pass

    def popen(command: list[str], **_: Any) -> None:
        commands.append(command)
        raise Spawned

    model = tmp_path / "vision-model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("LLMPLEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(server.subprocess, "Popen", popen)
    with pytest.raises(Spawned):
        LocalServer.for_model(model, mmproj=projector)
    (command,) = commands
    assert command[command.index("--mmproj") + 1] == str(projector.resolve())
    arguments = serve._parse_args(command[command.index("--model") :])
    assert (arguments.model, arguments.mmproj) == (model.resolve(), projector.resolve())
