"""Issue 16 item 5: the opt-in response cache, against a local OpenAI-wire server that counts requests."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.cache import CacheWarning, DiskStore, MemoryStore, ResponseCache
from llmplex.errors import LLMConfigurationError, LLMRefusalError, LLMServerError
from llmplex.events import Event, PromptExecuted
from llmplex.hookspecs import hookimpl
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

API_KEY = "sk-cache-test-0123456789abcdef"
MODEL = "faulty:gpt-4o-mini"


def client_for(server: FaultServer, plugin: ResponseCache | None = None, **config: Any) -> llmplex.Client:
    """A client whose ``faulty:`` instance is the OpenAI plugin pointed at ``server``."""
    instance = {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": API_KEY}
    plugins = [] if plugin is None else [plugin]
    return llmplex.Client({"providers": {"faulty": instance}, **config}, plugins=plugins)


class Recorder:
    """Keeps every PromptExecuted event."""

    def __init__(self) -> None:
        self.executed: list[PromptExecuted] = []

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        if isinstance(event, PromptExecuted):
            self.executed.append(event)


def test_item_5_second_identical_call_is_served_from_cache(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    first = client.complete(MODEL, "hi", temperature=0)
    second = client.complete(MODEL, "hi", temperature=0)
    assert fault_server.request_count == 1
    assert (first.cached, first.attempts) == (False, 1)
    assert (second.cached, second.attempts) == (True, 0)
    assert second.text == first.text and second.usage.input_tokens == first.usage.input_tokens
    assert second.provider == "faulty" and second.latency >= 0


def test_item_5_async_hit(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})

    async def twice() -> tuple[llmplex.Response, llmplex.Response]:
        return await client.acomplete(MODEL, "hi", temperature=0), await client.acomplete(MODEL, "hi", temperature=0)

    first, second = asyncio.run(twice())
    assert fault_server.request_count == 1
    assert not first.cached and second.cached and second.attempts == 0


@pytest.mark.parametrize(
    "change",
    [
        {"max_tokens": 5},
        {"system": "be brief"},
        {"provider_options": {"user": "u-2"}},
        {"tools": [{"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}]},
        {"cache_key": "other"},
    ],
)
def test_item_5_different_request_is_a_miss(fault_server: FaultServer, change: dict[str, Any]) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    client.complete(MODEL, "hi", temperature=0)
    changed = client.complete(MODEL, "hi", temperature=0, **change)
    assert not changed.cached
    assert fault_server.request_count == 2
    assert client.complete(MODEL, "hi", temperature=0, **change).cached
    assert fault_server.request_count == 2


def test_item_5_different_provider_instance_is_a_miss(fault_server: FaultServer) -> None:
    instance = {"plugin": "openai", "base_url": fault_server.url, "api": "chat", "api_key": API_KEY}
    client = llmplex.Client(
        {"providers": {"faulty": instance, "other": {**instance, "base_url": fault_server.url + "/"}}},
        cache={"backend": "memory"},
    )
    client.complete(MODEL, "hi", temperature=0)
    assert not client.complete("other:gpt-4o-mini", "hi", temperature=0).cached
    assert fault_server.request_count == 2


def test_item_5_key_holds_no_secret_in_clear(fault_server: FaultServer) -> None:
    store = MemoryStore()
    client = client_for(fault_server, plugin=ResponseCache(store))
    client.complete(MODEL, "hi", temperature=0)
    assert len(store._entries) == 1
    ((key, value),) = store._entries.items()
    assert len(key) == 64 and API_KEY not in key and API_KEY not in value


@pytest.mark.parametrize("temperature", [None, 0.7])
def test_item_5_sampled_request_without_key_is_not_cached(fault_server: FaultServer, temperature: float | None) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    for _ in range(2):
        assert not client.complete(MODEL, "hi", temperature=temperature).cached
    assert fault_server.request_count == 2


def test_item_5_explicit_key_or_cache_true_caches_sampled_requests(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    client.complete(MODEL, "hi", temperature=0.9, cache_key="sample-1")
    assert client.complete(MODEL, "hi", temperature=0.9, cache_key="sample-1").cached
    client.complete(MODEL, "hi", temperature=0.9, cache=True)
    assert client.complete(MODEL, "hi", temperature=0.9, cache=True).cached
    assert fault_server.request_count == 2


def test_item_5_cache_false_neither_reads_nor_writes(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    client.complete(MODEL, "hi", temperature=0, cache=False)
    client.complete(MODEL, "hi", temperature=0)
    assert not client.complete(MODEL, "hi", temperature=0, cache=False).cached
    assert client.complete(MODEL, "hi", temperature=0).cached
    assert fault_server.request_count == 3


def test_item_5_streaming_is_never_cached(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    client.complete(MODEL, "hi", temperature=0)
    for _ in range(2):
        final = list(client.stream(MODEL, "hi", temperature=0))[-1].response
        assert final is not None and not final.cached
    assert fault_server.request_count == 3


def test_item_5_answer_cut_short_is_not_stored(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    fault_server.enqueue(Fault.json(200, fx.chat_completion_truncated()))
    assert client.complete(MODEL, "hi", temperature=0).finish_reason == "length"
    assert not client.complete(MODEL, "hi", temperature=0).cached
    assert client.complete(MODEL, "hi", temperature=0).cached
    assert fault_server.request_count == 2


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.json(200, fx.chat_completion_refusal()), LLMRefusalError),
        (Fault.server_error(500), LLMServerError),
    ],
)
def test_item_5_errors_and_refusals_are_never_cached(
    fault_server: FaultServer, fault: Fault, error: type[Exception]
) -> None:
    client = client_for(fault_server, cache={"backend": "memory"}, throttle={"max_attempts": 1})
    fault_server.enqueue(fault)
    with pytest.raises(error):
        client.complete(MODEL, "hi", temperature=0)
    assert not client.complete(MODEL, "hi", temperature=0).cached
    assert fault_server.request_count == 2


def test_item_5_length_finish_is_not_stored() -> None:
    from llmplex.cache.keys import cacheable_response

    assert not cacheable_response(llmplex.Response(text="cut", finish_reason="length"))
    assert not cacheable_response(llmplex.Response(text="", refusal="no", finish_reason="stop"))
    assert cacheable_response(llmplex.Response(text="ok"))


def test_item_5_ttl_expiry_with_an_injected_clock(fault_server: FaultServer) -> None:
    now = [1000.0]
    client = client_for(fault_server, plugin=ResponseCache(MemoryStore(), ttl=60, now=lambda: now[0]))
    client.complete(MODEL, "hi", temperature=0)
    now[0] += 59
    assert client.complete(MODEL, "hi", temperature=0).cached
    now[0] += 1
    assert not client.complete(MODEL, "hi", temperature=0).cached
    assert fault_server.request_count == 2


def test_item_5_events_mark_hits(fault_server: FaultServer) -> None:
    recorder = Recorder()
    client = client_for(fault_server, cache={"backend": "memory"})
    client.host.register_observer(recorder)
    client.complete(MODEL, "hi", temperature=0)
    client.complete(MODEL, "hi", temperature=0)
    assert [e.cached for e in recorder.executed] == [False, True]
    assert recorder.executed[1].usage.input_tokens == recorder.executed[0].usage.input_tokens


def test_item_5_hit_spends_no_budget(fault_server: FaultServer) -> None:
    client = client_for(fault_server, cache={"backend": "memory"})
    tracker = llmplex.BudgetTracker(llmplex.Budget(max_total_tokens=1_000_000))
    client.complete(MODEL, "hi", temperature=0, budget=tracker)
    spent = tracker.snapshot().total_tokens
    client.complete(MODEL, "hi", temperature=0, budget=tracker)
    assert spent > 0 and tracker.snapshot().total_tokens == spent


_CHILD = """
import json, sys
import llmplex
server_url, directory, api_key = sys.argv[1:4]
instance = {"plugin": "openai", "base_url": server_url, "api": "chat", "api_key": api_key}
client = llmplex.Client({"providers": {"faulty": instance}, "cache": {"backend": "disk", "directory": directory}})
response = client.complete("faulty:gpt-4o-mini", "hi", temperature=0)
print(json.dumps({"cached": response.cached, "text": response.text}))
"""


def _child(server: FaultServer, directory: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLMPLEX_"))}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, server.url, str(directory), API_KEY],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_item_5_disk_backend_is_shared_by_two_processes(fault_server: FaultServer, tmp_path: Path) -> None:
    first = _child(fault_server, tmp_path / "responses")
    second = _child(fault_server, tmp_path / "responses")
    assert first["cached"] is False and second["cached"] is True
    assert second["text"] == first["text"]
    assert fault_server.request_count == 1


def test_item_5_disk_default_directory_follows_llmplex_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LLMPLEX_CACHE_DIR", str(tmp_path))
    assert DiskStore().directory == tmp_path / "responses"


def test_item_5_corrupted_entry_is_a_miss_with_a_warning(fault_server: FaultServer, tmp_path: Path) -> None:
    store = DiskStore(tmp_path / "responses")
    client = client_for(fault_server, plugin=ResponseCache(store))
    client.complete(MODEL, "hi", temperature=0)
    ((key,),) = [list(store._open().iterkeys())]
    store._open().set(key, '{"expires": null, "response": {"text": 5, "usage": "x"')
    with pytest.warns(CacheWarning, match="corrupted entry"):
        assert not client.complete(MODEL, "hi", temperature=0).cached
    assert fault_server.request_count == 2
    assert client.complete(MODEL, "hi", temperature=0).cached  # stored afresh


def test_item_5_non_text_entry_is_a_miss_with_a_warning(fault_server: FaultServer, tmp_path: Path) -> None:
    store = DiskStore(tmp_path / "responses")
    client = client_for(fault_server, plugin=ResponseCache(store))
    client.complete(MODEL, "hi", temperature=0)
    (key,) = list(store._open().iterkeys())
    import diskcache  # another program writes bytes there (llmplex's own store takes text only)

    with diskcache.Cache(str(tmp_path / "responses")) as foreign:
        foreign.set(key, b"\x00\xff garbage")
    with pytest.warns(CacheWarning, match="could not be read"):
        assert not client.complete(MODEL, "hi", temperature=0).cached


def test_item_5_unreadable_cache_directory_is_a_warning_and_a_miss(fault_server: FaultServer, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    client = client_for(fault_server, cache={"backend": "disk", "directory": str(blocker / "responses")})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = client.complete(MODEL, "hi", temperature=0)
        second = client.complete(MODEL, "hi", temperature=0)
    assert not first.cached and not second.cached
    assert fault_server.request_count == 2
    assert any(issubclass(w.category, CacheWarning) for w in caught)


def test_item_5_bad_per_call_options_are_typed_errors() -> None:
    client = llmplex.Client(cache={"backend": "memory"})
    with pytest.raises(LLMConfigurationError, match="cache must be"):
        client.complete("mock:echo", "hi", cache="yes")  # type: ignore[typeddict-item]
    with pytest.raises(LLMConfigurationError, match="cache_key must be"):
        client.complete("mock:echo", "hi", cache_key="")


def test_item_5_bad_cache_table_is_a_typed_error() -> None:
    with pytest.raises(LLMConfigurationError, match="backend"):
        llmplex.Client(cache={"backend": "redis"})
    with pytest.raises(LLMConfigurationError, match="ttl"):
        llmplex.Client(cache={"backend": "memory", "ttl": -1})


def test_item_5_no_cache_table_registers_nothing() -> None:
    client = llmplex.Client()
    assert client.host.pm.get_plugin("llmplex.cache") is None
    assert not any(isinstance(p, ResponseCache) for p in client.host.pm.get_plugins())
