"""Issue 21 item 7: the response cache never stores an error or an answer that failed ``output=`` validation,
and never runs code from a cache file (data only; a foreign or corrupt entry is a warning and a miss)."""

from __future__ import annotations

import asyncio
import json
import pickle
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import llmplex
from llmplex.cache import CacheWarning, DiskStore, MemoryStore, ResponseCache
from llmplex.cache.keys import request_key
from llmplex.cache.plugin import ENTRY_FORMAT
from llmplex.errors import LLMOutputParseError, LLMServerError
from tests.support.fault_server import Fault, FaultServer
from tests.support.fixtures import fault_server

__all__ = ["fault_server"]

API_KEY = "sk-cache-edges-0123456789abcdef"
MODEL = "faulty:gpt-4o-mini"


class City(BaseModel):
    name: str
    population: int


def client_for(server: FaultServer, cache: ResponseCache) -> llmplex.Client:
    instance = {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": API_KEY}
    return llmplex.Client({"providers": {"faulty": instance}, "throttle": {"max_attempts": 1}}, plugins=[cache])


def test_item_7_an_answer_failing_output_validation_is_never_stored(fault_server: FaultServer) -> None:
    store = MemoryStore()
    client = client_for(fault_server, ResponseCache(store))
    fault_server.enqueue(Fault.ok('{"name": "Oslo", "population": "many"}'))  # valid JSON, invalid value
    with pytest.raises(LLMOutputParseError):
        client.complete(MODEL, "a city", temperature=0, output=City, output_retries=0)
    assert store._entries == {}
    fault_server.enqueue(Fault.ok('{"name": "Oslo", "population": 700000}'))
    answer = client.complete(MODEL, "a city", temperature=0, output=City, output_retries=0)
    assert answer.output == City(name="Oslo", population=700000) and not answer.cached
    assert len(store._entries) == 1  # the valid one is kept once accepted
    again = client.complete(MODEL, "a city", temperature=0, output=City, output_retries=0)
    assert again.cached and again.output == answer.output
    assert fault_server.request_count == 2


def test_item_7_a_reask_round_keeps_only_the_valid_answer(fault_server: FaultServer) -> None:
    store = MemoryStore()
    client = client_for(fault_server, ResponseCache(store))
    fault_server.enqueue(Fault.ok("no JSON here at all"), Fault.ok('{"name": "Rome", "population": 2800000}'))
    answer = client.complete(MODEL, "a city", temperature=0, output=City, output_retries=1)
    assert answer.output.name == "Rome" and fault_server.request_count == 2
    assert len(store._entries) == 1
    (stored,) = (json.loads(v) for v in store._entries.values())
    assert "Rome" in stored["response"]["text"]


def test_item_7_async_structured_call_holds_its_write_too(fault_server: FaultServer) -> None:
    store = MemoryStore()
    client = client_for(fault_server, ResponseCache(store))
    fault_server.enqueue(Fault.ok('{"name": 5}'))

    async def run() -> None:
        with pytest.raises(LLMOutputParseError):
            await client.acomplete(MODEL, "a city", temperature=0, output=City, output_retries=0)

    asyncio.run(run())
    assert store._entries == {}


@pytest.mark.parametrize("fault", [Fault.server_error(500), Fault.json(200, {"choices": "broken"})])
def test_item_7_errors_are_never_stored(fault_server: FaultServer, fault: Fault) -> None:
    store = MemoryStore()
    client = client_for(fault_server, ResponseCache(store))
    fault_server.enqueue(fault)
    with pytest.raises(llmplex.LLMError):
        client.complete(MODEL, "hi", temperature=0)
    assert store._entries == {}


def _entry(response: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"format": ENTRY_FORMAT, "expires": None, "response": response, **extra})


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (_entry({"text": "boom", "finish_reason": "error"}), "never caches"),
        (_entry({"text": "no", "refusal": "no", "finish_reason": "stop"}), "never caches"),
        (_entry({"text": "cut", "finish_reason": "length"}), "never caches"),
        (json.dumps({"expires": None, "response": {"text": "old format"}}), "not an llmplex entry"),
        (_entry({"text": "x"}, expires="tomorrow"), "not a time"),
        (_entry({"text": "x"}, expires=float("nan")), "not a time"),
        ("[" * 100_000, "RecursionError"),
        ("\x80\x04not json", "JSONDecodeError"),
    ],
)
def test_item_7_a_stored_error_or_foreign_entry_is_a_warning_and_a_miss(
    fault_server: FaultServer, text: str, why: str
) -> None:
    store = MemoryStore()
    cache = ResponseCache(store)
    client = client_for(fault_server, cache)
    route, request = client.build_request(MODEL, "hi", temperature=0)
    store.set(request_key(request, route.provider.settings), text, None)
    with pytest.warns(CacheWarning, match="corrupted entry") as caught:
        answer = client.complete(MODEL, "hi", temperature=0)
    assert not answer.cached and answer.finish_reason == "stop" and fault_server.request_count == 1
    assert any(why in str(w.message) for w in caught if issubclass(w.category, CacheWarning))
    assert client.complete(MODEL, "hi", temperature=0).cached  # replaced by the real answer


class _Payload:
    """Unpickling it would run code: it records that it ran."""

    def __reduce__(self) -> Any:
        return (Path.write_text, (Path("PWNED"), "ran"))


def test_item_7_a_pickled_entry_in_the_disk_cache_is_never_loaded(fault_server: FaultServer, tmp_path: Path) -> None:
    store = DiskStore(tmp_path / "responses")
    client = client_for(fault_server, ResponseCache(store))
    client.complete(MODEL, "hi", temperature=0)
    (key,) = list(store._open().iterkeys())
    # another program writes a pickle under the key (diskcache's own default Disk pickles non-text values)
    import diskcache

    foreign = diskcache.Cache(str(tmp_path / "responses"))
    foreign.set(key, _Payload())
    foreign.close()
    marker = Path("PWNED")
    with pytest.warns(CacheWarning, match="pickled value, which llmplex never writes nor loads"):
        assert not client.complete(MODEL, "hi", temperature=0).cached
    assert not marker.exists()
    assert fault_server.request_count == 2
    assert client.complete(MODEL, "hi", temperature=0).cached


def test_item_7_a_pickle_file_as_a_large_entry_is_never_loaded(tmp_path: Path) -> None:
    """A value file diskcache would unpickle (MODE_PICKLE row pointing at a file) is refused too."""
    store = DiskStore(tmp_path / "responses")
    store.set("k", "x" * 10, None)
    database = sqlite3.connect(tmp_path / "responses" / "cache.db")
    (tmp_path / "responses" / "evil.val").write_bytes(pickle.dumps(_Payload()))
    database.execute("UPDATE Cache SET mode = 4, filename = 'evil.val', value = NULL WHERE key = 'k'")
    database.commit()
    database.close()
    with pytest.raises(ValueError, match="pickled value"):
        store.get("k")
    assert not Path("PWNED").exists()


def test_item_7_a_corrupt_cache_database_is_a_warning_and_the_call_still_answers(
    fault_server: FaultServer, tmp_path: Path
) -> None:
    directory = tmp_path / "responses"
    directory.mkdir()
    (directory / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    client = client_for(fault_server, ResponseCache(DiskStore(directory)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = client.complete(MODEL, "hi", temperature=0)
    assert answer.text and not answer.cached
    assert any(issubclass(w.category, CacheWarning) for w in caught)


def test_item_7_entries_are_json_data_with_a_format_marker(fault_server: FaultServer) -> None:
    store = MemoryStore()
    client = client_for(fault_server, ResponseCache(store))
    client.complete(MODEL, "hi", temperature=0)
    (value,) = store._entries.values()
    entry = json.loads(value)
    assert entry["format"] == ENTRY_FORMAT and set(entry) == {"format", "expires", "response"}
    with pytest.raises(TypeError, match="text only"):
        DiskStore(Path("d")).set("k", b"bytes", None)  # type: ignore[arg-type]


def test_item_7_server_error_through_the_cache_is_typed(fault_server: FaultServer) -> None:
    client = client_for(fault_server, ResponseCache(MemoryStore()))
    fault_server.enqueue(Fault.server_error(503))
    with pytest.raises(LLMServerError):
        client.complete(MODEL, "hi", temperature=0)
