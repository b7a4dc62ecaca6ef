"""Issue 26 item 7: an async embedding hook (``llmplex_aembed``) so async plugins embed without a worker
thread; the openai plugin uses it (its sync ``llmplex_embed`` is never called from async code)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx
import pytest
import respx

import llmplex
from tests.platform.site import install_providers
from tests.plugins.openai.conftest import API_KEY, OPENAI_URL
from tests.providers_next import asyncembed_plugin


@pytest.fixture
def asyncembed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    install_providers(tmp_path, monkeypatch, {"asyncembed": "tests.providers_next.asyncembed_plugin"})
    asyncembed_plugin.CALLS.clear()
    return asyncembed_plugin.CALLS


def test_item_7_an_async_plugin_embeds_on_the_callers_loop_without_a_worker_thread(
    asyncembed: list[dict[str, object]],
) -> None:
    client = llmplex.Client()

    async def main() -> tuple[llmplex.Embeddings, asyncio.AbstractEventLoop]:
        return await client.aembed("asyncembed:e", ["a", "bb", "ccc"], batch_size=2), asyncio.get_running_loop()

    result, loop = asyncio.run(main())
    assert [v[0] for v in result.vectors] == [1.0, 2.0, 3.0]
    assert len(asyncembed) == 2
    for call in asyncembed:
        assert call["loop"] is loop  # on the caller's own loop
        assert call["thread"] == threading.main_thread().name  # no worker thread in between


def test_item_7_sync_embed_of_an_async_only_plugin_is_bridged(asyncembed: list[dict[str, object]]) -> None:
    result = llmplex.Client().embed("asyncembed:e", ["xy"])
    assert result.vectors == [[2.0, 1.0]]


def test_item_7_an_async_embedding_hook_exiting_is_a_typed_error(asyncembed: list[dict[str, object]]) -> None:
    async def main() -> None:
        await llmplex.Client().aembed("asyncembed:e", ["exit"])

    with pytest.raises(llmplex.LLMError, match=r"raised SystemExit: the plugin called sys\.exit\(3\)"):
        asyncio.run(main())


def test_item_7_the_openai_plugin_embeds_async_through_its_async_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    import llmplex_openai.embeddings as openai_embeddings
    import llmplex_openai.plugin as openai_plugin

    assert hasattr(openai_plugin, "llmplex_aembed")

    def no_sync(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sync embedding hook ran for an async call")

    monkeypatch.setattr(openai_embeddings, "embed", no_sync)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    body = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25, 0.0]}],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }
    with respx.mock(assert_all_mocked=True) as router:
        router.post(OPENAI_URL + "/embeddings").mock(return_value=httpx.Response(200, json=body))
        result = asyncio.run(llmplex.Client().aembed("openai:text-embedding-3-small", ["a"]))
        assert json.loads(router.calls[0].request.content)["input"] == ["a"]
    assert result.vectors == [[0.5, 0.25, 0.0]]
