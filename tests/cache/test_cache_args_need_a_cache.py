"""``cache=True`` / ``cache_key=`` never do nothing silently.

Without a response cache (no ``[cache]`` table, no ``ResponseCache`` plugin) they raise an
``LLMConfigurationError`` saying how to turn the cache on, before anything is sent; on a stream,
which is never cached, they raise saying so. ``cache=False`` is always allowed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import llmplex
from llmplex.cache import MemoryStore, ResponseCache
from llmplex.providers.mock import MockBackend


@pytest.mark.parametrize("kwargs", [{"cache": True}, {"cache_key": "sample-a"}])
def test_cache_arguments_without_a_cache_say_how_to_turn_it_on(
    client: llmplex.Client, mock_backend: MockBackend, kwargs: dict[str, object]
) -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match=r"response cache, which is off.*\[cache\] table") as caught:
        client.complete("mock:echo", "hi", **kwargs)  # type: ignore[arg-type]
    assert 'backend = "memory"' in str(caught.value) and "ResponseCache" in str(caught.value)
    with pytest.raises(llmplex.LLMConfigurationError, match="response cache"):
        asyncio.run(client.acomplete("mock:echo", "hi", **kwargs))  # type: ignore[arg-type]
    assert mock_backend.calls == []  # type: ignore[attr-defined]


def test_cache_false_without_a_cache_is_fine(client: llmplex.Client) -> None:
    assert client.complete("mock:echo", "hi", cache=False).text == "hi"


def test_cache_arguments_work_with_a_cache_table_in_the_config_file(isolated_config: Path) -> None:
    (isolated_config / "llmplex.toml").write_text('[cache]\nbackend = "memory"\n')
    client = llmplex.Client()
    assert not client.complete("mock:echo", "hi", temperature=0.7, cache=True).cached
    assert client.complete("mock:echo", "hi", temperature=0.7, cache=True).cached


def test_cache_arguments_work_with_a_response_cache_plugin() -> None:
    client = llmplex.Client(plugins=[ResponseCache(MemoryStore())])
    assert not client.complete("mock:echo", "hi", temperature=0.7, cache_key="a").cached
    assert client.complete("mock:echo", "hi", temperature=0.7, cache_key="a").cached


@pytest.mark.parametrize("kwargs", [{"cache": True}, {"cache_key": "sample-a"}])
def test_cache_arguments_on_a_stream_say_streams_are_never_cached(kwargs: dict[str, object]) -> None:
    client = llmplex.Client(cache={"backend": "memory"})
    with pytest.raises(llmplex.LLMConfigurationError, match="streams are never cached"):
        list(client.stream("mock:echo", "hi", **kwargs))  # type: ignore[arg-type]
    assert "".join(e.text for e in client.stream("mock:echo", "hi", cache=False)) == "hi"
