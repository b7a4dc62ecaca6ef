"""Issue 34 item 3: a call held to a deadline announces its own read timeout in a header (the SDK's
``x-stainless-read-timeout``), so its header list differs from the last call's in that one value. llmplex-openai's
wire hands on its other headers as the same objects, and ``llmplex.http.direct``'s sender changes that value in the
list it worked out for the last post instead of working the whole list out again; what it hands aiohttp is what
working it out whole gives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llmplex_openai import lean
from openai.resources.chat.completions.completions import Completions

import llmplex
from llmplex.http import direct
from llmplex.http.direct import _Target, direct_sender

TARGET = _Target(None, "127.0.0.1:8000")
BASE = [(b"Accept", b"application/json"), (b"X-Two", b"a"), (b"x-two", b"b"), (b"X-Stainless-Read-Timeout", b"600")]


def _worked_out(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    merged, worked = direct._merged, []

    def counted(*args: Any) -> Any:
        worked.append(args)
        return merged(*args)

    monkeypatch.setattr(direct, "_merged", counted)
    return worked


def _items(lists: list[list[tuple[bytes, bytes]]]) -> list[Any]:
    async def run() -> list[Any]:
        llm = llmplex.Client(providers={"p": {"plugin": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"}})
        try:
            http = llm.router.instance("p").clients.get(asynchronous=True)._client
            sender = direct_sender(http)
            assert sender is not None
            return [sender._items(TARGET, headers, b"{}") for headers in lists]
        finally:
            await llm.aclose()

    return asyncio.run(run())


def _whole(headers: list[tuple[bytes, bytes]]) -> Any:
    merged = direct._merged(TARGET, headers)
    return None if merged is None else [*merged.items, ("content-length", "2")]


def test_item_3_an_announced_timeout_changes_that_value_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    lists = [[*BASE[:3], (BASE[3][0], value)] for value in (b"600", b"59.91", b"12.5", b"59.91")]
    worked = _worked_out(monkeypatch)
    items = _items(lists)
    monkeypatch.undo()
    assert len(worked) == 1
    assert items == [_whole(headers) for headers in lists]
    assert [dict(found)["x-stainless-read-timeout"] for found in items] == ["600", "59.91", "12.5", "59.91"]
    assert dict(items[0])["x-two"] == "a, b"


@pytest.mark.parametrize(
    "changed",
    [
        [BASE[0], (b"X-Two", b"c"), *BASE[2:]],  # a header given twice: joined again
        [*BASE[:3], (b"X-Stainless-Read-Timeout", "é".encode())],  # not ASCII: httpx's own rules
        [*BASE[:3], (b"X-Other", b"1")],  # another name
        BASE[:3],  # another length
    ],
)
def test_item_3_other_changes_are_worked_out_whole(
    monkeypatch: pytest.MonkeyPatch, changed: list[tuple[bytes, bytes]]
) -> None:
    worked = _worked_out(monkeypatch)
    items = _items([BASE, changed])
    monkeypatch.undo()
    assert len(worked) == 2
    assert items == [_whole(BASE), _whole(changed)]


def test_item_3_the_wire_announces_a_timeout_keeping_its_other_headers() -> None:
    async def run() -> tuple[Any, list[tuple[bytes, bytes]]]:
        llm = llmplex.Client(providers={"p": {"plugin": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"}})
        try:
            client = llm.router.instance("p").clients.get(asynchronous=True)
            wire = lean._wire(client, "/chat/completions", Completions.create)
            return wire, wire.headers_for(12.5)
        finally:
            await llm.aclose()

    wire, headers = asyncio.run(run())
    timed = [k.lower() == b"x-stainless-read-timeout" for k, _ in wire.headers]
    assert timed.count(True) == 1
    assert headers == [(k, b"12.5" if at else v) for (k, v), at in zip(wire.headers, timed, strict=True)]
    assert all(new is old for new, old, at in zip(headers, wire.headers, timed, strict=True) if not at)
    assert wire.headers_for(None) == list(wire.headers)
