"""Issue 16 item 4: ``client.models(provider)`` — through the plugin's hook, cached per Client, typed errors,
``llmplex models [PROVIDER] [--json]`` (against the mock provider and a plugin without the hook)."""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path

import pytest

import llmplex
from llmplex import Client, LLMConfigurationError
from llmplex.types import ModelInfo
from tests.support.cli import run_llmplex


def test_item_4_mock_lists_its_models_with_the_provider_filled(client: Client) -> None:
    models = client.models("mock")
    assert [m.id for m in models] == ["echo", "embed"]
    assert all(isinstance(m, ModelInfo) and m.provider == "mock" for m in models)
    assert "embeddings" in models[1].features
    assert llmplex.models("mock") == models


def test_item_4_the_list_is_cached_per_client() -> None:
    asked = []

    class Counter:
        @llmplex.hookimpl(wrapper=True)
        def llmplex_models(self) -> Generator[None, list[ModelInfo], list[ModelInfo]]:
            asked.append(1)
            return (yield)

    client = Client(plugins=[Counter()])
    first = client.models("mock")
    assert client.models("mock") == first and asked == [1]
    assert Client(plugins=[Counter()]).models("mock") == first and asked == [1, 1]
    client.models("mock", refresh=True)
    assert asked == [1, 1, 1]


def test_item_4_errors_are_typed(client: Client) -> None:
    with pytest.raises(LLMConfigurationError, match="does not implement llmplex_models"):
        client.models("sentinel")
    with pytest.raises(LLMConfigurationError):
        client.models("nosuchprovider")
    with pytest.raises(LLMConfigurationError, match="provider must be a prefix"):
        client.models("")


def test_item_4_cli_models_table_and_json(tmp_path: Path) -> None:
    table = run_llmplex("models", "mock", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "echo" in table.stdout and "embeddings" in table.stdout
    listed = json.loads(run_llmplex("models", "mock", "--json", cwd=tmp_path).stdout)
    assert [m["id"] for m in listed] == ["echo", "embed"] and listed[0]["provider"] == "mock"
    everything = run_llmplex("models", "--json", cwd=tmp_path)
    assert everything.returncode == 0 and {"echo", "embed"} <= {m["id"] for m in json.loads(everything.stdout)}
    bad = run_llmplex("models", "sentinel", cwd=tmp_path)
    assert bad.returncode != 0 and "llmplex_models" in bad.stderr and "Traceback" not in bad.stderr
