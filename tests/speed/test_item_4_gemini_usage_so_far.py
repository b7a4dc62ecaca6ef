"""Issue 34 item 4: a Gemini stream keeps the usage so far without an event a chunk.

Gemini repeats the usage so far on every chunk; the parser keeps the latest as ``StreamState.usage_so_far`` and
hands on one usage event, with the finish reason, or core does at the stream's end or cut-off. The events equal
the SDK models' for every split (plain data and the SDK's models read alike), a stream shows one usage event with
the final counts, a stream cut, abandoned or cancelled mid-read counts the usage it reported so far, and impossible
counts still fail the stream when they are the ones it ends with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google.genai import types
from llmplex_gemini.streaming import parse_chunk

import llmplex
from llmplex import Budget, BudgetTracker, LLMError, LLMUsageError, StreamEvent, Usage
from llmplex.types import Message, Request, StreamState
from llmplex.types.usage import MAX_TOKENS
from tests.plugins.gemini.wire import MODEL, function_call_part, stream_body, text_part, usage
from tests.speed.gemini_stream_cases import _chunk, _config, client, server, via
from tests.support.stream_server import Reply, StreamServer

__all__ = ["client", "server", "via"]

REQUEST = Request(model=MODEL, messages=(Message.user("hi"),))
FLAT = {"promptTokenCount": 4200, "candidatesTokenCount": 3, "totalTokenCount": 4203}
USAGES: list[dict[str, Any] | None] = [
    None,
    FLAT,
    usage(9, 3),
    usage(7, 4, thoughts=2),
    {**usage(7, 4), "cachedContentTokenCount": 5},
]
SPLITS: list[list[dict[str, Any]]] = [
    [text_part("Hel"), text_part("lo")],
    [{"text": "thinking", "thought": True}, text_part("said")],
    [function_call_part("get_weather", {"city": "Paris"}, "call_1"), text_part("x")],
    [],
]
PROMPT = "word " * 400  # 2000 characters: a reservation of 500 input tokens


def _stream(metadata: dict[str, Any] | None, parts: list[dict[str, Any]], finish: str | None) -> list[dict[str, Any]]:
    """Three chunks of ``parts``, each reporting ``metadata`` with one more candidate token; the last ``finish``."""
    chunks = []
    for index in range(3):
        counts = None if metadata is None else {**metadata, "candidatesTokenCount": index + 1}
        if counts is not None and "totalTokenCount" in counts:
            counts["totalTokenCount"] = (
                counts.get("promptTokenCount", 0) + index + 1 + counts.get("thoughtsTokenCount", 0)
            )
        chunks.append(_chunk(parts, finish if index == 2 else None, usage_metadata=counts))
    return chunks


def _read(chunks: list[Any]) -> tuple[list[list[StreamEvent]], StreamEvent | None]:
    """Each chunk's events, and the usage event left for core at the end (``usage_so_far`` built)."""
    state = StreamState(request=REQUEST)
    events = [parse_chunk(chunk, state) for chunk in chunks]
    return events, None if state.usage_so_far is None else state.usage_so_far()


@pytest.mark.parametrize("finish", ["STOP", None])
@pytest.mark.parametrize("metadata", USAGES, ids=repr)
def test_item_4_gemini_usage_so_far_equals_the_sdk_models_for_every_split(
    metadata: dict[str, Any] | None, finish: str | None
) -> None:
    """Plain chunks and the SDK's models of them give the same events chunk by chunk, and the same usage left for
    core: no usage event before the finish reason, one with it (or none left when the stream had no finish)."""
    for parts in SPLITS:
        chunks = _stream(metadata, parts, finish)
        fast, fast_left = _read(chunks)
        sdk, sdk_left = _read([types.GenerateContentResponse.model_validate(chunk) for chunk in chunks])
        assert fast == sdk and fast_left == sdk_left
        flat = [event for events in fast for event in events], [event for events in sdk for event in events]
        for one, other in zip([*flat[0], fast_left], [*flat[1], sdk_left], strict=True):
            assert one is None or one.model_fields_set == other.model_fields_set  # type: ignore[union-attr]
        assert not [event for events in fast[:2] for event in events if event.type == "usage"]
        usages = [event for event in fast[2] if event.type == "usage"]
        last = usages[0] if usages else fast_left
        if metadata is None:
            assert last is None and not usages
            continue
        assert len(usages) == (1 if finish else 0) and (fast_left is None) == bool(finish)
        assert last is not None and last.usage is not None and last.usage.output_tokens >= 3
        if finish:
            assert fast[2][-1].type == "finish"


@pytest.mark.parametrize("finish", ["STOP", None])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_gemini_stream_hands_on_one_usage_event_with_the_final_counts(
    mode: str, finish: str | None, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """Read through llmplex (the SDK's path and the lean one alike): one usage event, the last chunk's counts,
    just before the finish (or, without a finish reason, just before the last event)."""
    chunks = _stream(FLAT, [text_part("w ")], finish)
    seen: list[list[StreamEvent]] = []
    for sdk in (True, False):
        via(sdk)
        server.script(Reply.events(stream_body(chunks)))
        seen.append(_events(client, mode))
    assert seen[0][:-1] == seen[1][:-1]  # the last events' answers differ in their latency
    events = seen[1]
    usages = [index for index, event in enumerate(events) if event.type == "usage"]
    assert usages == [len(events) - (3 if finish else 2)]
    used = events[usages[0]].usage
    assert used is not None and (used.input_tokens, used.output_tokens, used.total_tokens) == (4200, 3, 4203)
    final = events[-1].response
    assert final is not None and final.usage.output_tokens == 3 and final.text == "w w w "


def _events(client: llmplex.Client, mode: str, **kwargs: Any) -> list[StreamEvent]:
    model = f"g:{MODEL}"
    if mode == "stream":
        return list(client.stream(model, "hi", **kwargs))

    async def read() -> list[StreamEvent]:
        return [event async for event in client.astream(model, "hi", **kwargs)]

    return asyncio.run(read())


@pytest.fixture
def budgeted(server: StreamServer) -> Iterator[tuple[llmplex.Client, BudgetTracker]]:
    tracker = BudgetTracker(Budget(max_total_tokens=10**6))
    built = llmplex.Client(_config(server.url), throttle={"max_attempts": 1}, budget=tracker)
    yield built, tracker
    built.close()


def _counted(tracker: BudgetTracker) -> tuple[int, int]:
    spent = tracker.snapshot()
    return spent.input_tokens, spent.output_tokens


HALF = [_chunk([text_part("Hi")], usage_metadata=FLAT)]


@pytest.mark.parametrize("ending", ["cut", "abandoned", "cancelled"])
def test_item_4_gemini_stream_ended_mid_way_counts_the_usage_so_far(
    ending: str, server: StreamServer, budgeted: tuple[llmplex.Client, BudgetTracker], via: Callable[[bool], None]
) -> None:
    """A stream cut by the server, abandoned by its reader or cancelled mid-read, after a chunk reporting 4,200
    prompt tokens: the budget counts those (more than the 500 reserved), read from the usage so far."""
    built, tracker = budgeted
    via(False)
    server.script(Reply.events(stream_body(HALF), ending="stall" if ending == "cancelled" else "cut"))
    model = f"g:{MODEL}"
    if ending == "cut":
        with pytest.raises(LLMError):
            list(built.stream(model, PROMPT, max_tokens=50))
    elif ending == "abandoned":
        stream = built.stream(model, PROMPT, max_tokens=50)
        assert next(iter(stream)).text == "Hi"
        stream.close()  # type: ignore[attr-defined]
    else:

        async def cancelled() -> None:
            first = asyncio.Event()

            async def read() -> None:
                async for _ in built.astream(model, PROMPT, max_tokens=50):
                    first.set()

            task = asyncio.create_task(read())
            await first.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancelled())
    assert _counted(tracker) == (4200, 50)


def test_item_4_hostile_gemini_usage_so_far_is_read_only_where_it_ends(
    server: StreamServer, budgeted: tuple[llmplex.Client, BudgetTracker], via: Callable[[bool], None]
) -> None:
    """Counts that cannot be: read (and failing the stream as validation fails) when the stream ends on them, with
    or without a finish reason; counted as unreported (the reservation) when a cut leaves them; never read when a
    later chunk reports the usage again."""
    built, tracker = budgeted
    negative = {"promptTokenCount": -5, "candidatesTokenCount": 1, "totalTokenCount": -4}
    huge = {"promptTokenCount": MAX_TOKENS + 1, "candidatesTokenCount": 1}
    model = f"g:{MODEL}"
    for sdk in (True, False):
        via(sdk)
        for counts in (negative, huge):
            for finish in ("STOP", None):
                server.script(
                    Reply.events(stream_body([*HALF, _chunk([text_part("!")], finish, usage_metadata=counts)]))
                )
                with pytest.raises(LLMUsageError):
                    list(built.stream(model, "hi"))
    via(False)
    server.script(Reply.events(stream_body([_chunk([text_part("Hi")], usage_metadata=negative)]), ending="cut"))
    with pytest.raises(LLMError) as cut:
        list(built.stream(model, PROMPT, max_tokens=50))
    assert not isinstance(cut.value, LLMUsageError)
    assert _counted(tracker) == (500, 50)
    superseded = [
        _chunk([text_part("Hi")], usage_metadata=negative),
        _chunk([text_part("!")], "STOP", usage_metadata=FLAT),
    ]
    server.script(Reply.events(stream_body(superseded)))
    final = list(built.stream(model, "hi"))[-1].response
    assert final is not None and final.usage == Usage(input_tokens=4200, output_tokens=3, total_tokens=4203)
