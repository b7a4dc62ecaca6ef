"""Issue 33 item 4: hedged requests; the fake server sees the loser cancelled; usage counts once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

import llmplex
from llmplex import Clock, Hedged, LLMDeadlineExceededError
from llmplex.routing.strategies import ordered
from tests.groups.helpers import API_KEY, Recorder
from tests.groups.slow_server import SlowServer

EAST_FIRST = Clock(random=lambda: 0.0)
_opened: list[llmplex.Client] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    """Every client a test made is closed after it (its SDK clients' connections with it)."""
    yield
    while _opened:
        _opened.pop().close()


@contextmanager
def slow_servers(*names: str) -> Iterator[dict[str, SlowServer]]:
    with ExitStack() as stack:
        yield {name: stack.enter_context(SlowServer()) for name in names or ("east", "west")}


def _client(
    fakes: dict[str, SlowServer], hedge: str = "100ms", group_extra: dict[str, Any] | None = None, **extra: Any
) -> tuple[llmplex.Client, Recorder]:
    providers = {
        name: {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": API_KEY}
        for name, server in fakes.items()
    }
    group = {"hedge": hedge, "deployments": [{"model": f"{name}:gpt-4o-mini"} for name in fakes], **(group_extra or {})}
    recorder = Recorder()
    client = llmplex.Client(
        {"providers": providers, "groups": {"chat": group}, **extra}, plugins=[recorder], clock=EAST_FIRST
    )
    _opened.append(client)
    _warm(client, fakes)
    return client, recorder


def _warm(client: llmplex.Client, fakes: dict[str, SlowServer]) -> None:
    """Load the plugin and its SDK (sync and async) first: a first use's imports would hold up the hedge timer."""

    async def warm() -> None:
        for name in fakes:
            await client.acomplete(f"{name}:gpt-4o-mini", "warm up")

    for name in fakes:
        client.complete(f"{name}:gpt-4o-mini", "warm up")
    asyncio.run(warm())
    for server in fakes.values():
        server.reset()


def test_item_4_a_slow_first_byte_is_hedged_and_the_server_sees_the_loser_cancelled() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, budget={"max_total_tokens": 10_000})
        fakes["east"].delay(30)
        before = client.calls.budget.snapshot()  # type: ignore[union-attr]
        answer = client.complete("chat", "hi", max_tokens=50)  # bounded: the hedge's reservation fits beside
        assert (answer.provider, answer.text) == ("west", "hedged answer")
        assert fakes["east"].hung_up.wait(10)  # the loser's connection was closed, not left to run 30 s
        assert (fakes["east"].cancelled, fakes["east"].answered, fakes["west"].answered) == (1, 0, 1)
        [hedged] = recorder.of(Hedged)
        assert (hedged.group, hedged.hedge, hedged.won, hedged.provider) == ("chat", "west:gpt-4o-mini", True, "west")
        assert hedged.hedge_usage.total_tokens == 0 and hedged.delay == pytest.approx(0.1)
        spent = client.calls.budget.snapshot()  # type: ignore[union-attr]
        assert spent.total_tokens - before.total_tokens == answer.usage.total_tokens  # the winner, counted once


def test_item_4_a_hedged_stream_keeps_the_winner_and_closes_the_loser() -> None:
    with slow_servers() as fakes:
        client, _ = _client(fakes)
        fakes["east"].delay(30)
        events = list(client.stream("chat", "hi"))
        assert "".join(e.text or "" for e in events if e.type == "text") == "hedged answer"
        assert events[-1].response is not None and events[-1].response.provider == "west"
        assert fakes["east"].hung_up.wait(10)


def test_item_4_async_hedge_and_the_first_deployment_winning() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes)
        fakes["east"].delay(30)

        async def calls() -> tuple[llmplex.Response, list[llmplex.StreamEvent]]:
            answer = await client.acomplete("chat", "hi")
            fakes["east"].delay(30)
            streamed = [e async for e in client.astream("chat", "hi")]
            return answer, streamed

        answer, streamed = asyncio.run(calls())
        assert answer.provider == "west" and streamed[-1].response is not None
        assert streamed[-1].response.provider == "west"
        assert fakes["east"].hung_up.wait(10)
        assert len(recorder.of(Hedged)) == 2


def test_item_4_an_answer_before_the_hedge_delay_sends_one_request() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, hedge="20s")
        assert client.complete("chat", "hi").provider == "east"
        assert (fakes["east"].received, fakes["west"].received) == (1, 0)
        assert recorder.of(Hedged) == []


def test_item_4_no_hedge_while_every_other_deployment_is_cooling() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, hedge="50ms")
        group = client.router.group("chat")
        west = group.deployments[1]
        group.started(west)
        group.ended(west, "failed", None, 30.0)  # west failed: with allowed_fails 3, not yet cooling
        group.started(west)
        group.ended(west, "failed", None, 30.0)
        group.started(west)
        group.ended(west, "failed", None, 30.0)  # cooling for 30 s now
        fakes["east"].delay(0.3)
        assert client.complete("chat", "hi").provider == "east"
        assert fakes["west"].received == 0 and recorder.of(Hedged) == []


def test_item_4_hedging_never_passes_the_deadline() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, hedge="50ms")
        fakes["east"].delay(30)
        fakes["west"].delay(30)
        started = time.monotonic()
        with pytest.raises(LLMDeadlineExceededError):
            client.complete("chat", "hi", timeout=1.0)
        assert time.monotonic() - started < 10
        assert fakes["east"].hung_up.wait(10)
        assert recorder.of(Hedged)  # the hedge was sent (it may not have reached its server before the deadline)
        assert fakes["west"].answered == 0 and (fakes["west"].received == 0 or fakes["west"].hung_up.wait(10))


def test_item_4_a_hedged_sync_stream_abandoned_after_its_first_event_closes_both_requests() -> None:
    with slow_servers() as fakes:
        client, _ = _client(fakes)
        fakes["east"].delay(30)
        events = client.stream("chat", "hi")
        first = next(iter(events))
        events.close()  # type: ignore[attr-defined]
        assert first.type in ("text", "response")
        assert fakes["east"].hung_up.wait(10) and fakes["west"].received == 1


def test_item_4_a_failed_hedge_is_replaced_by_another_while_the_first_is_still_slow() -> None:
    with slow_servers("east", "west", "north") as fakes:
        client, recorder = _client(fakes)
        fakes["east"].delay(30)
        fakes["west"].fail(1)
        answer = client.complete("chat", "hi")
        assert answer.provider == "north" and fakes["east"].hung_up.wait(10)
        assert (fakes["west"].received, fakes["north"].answered) == (1, 1)
        assert recorder.of(Hedged)[-1].hedge == "north:gpt-4o-mini"


def _cool(group: Any, deployment: Any, times: int = 3) -> float:
    """``deployment`` failed ``times`` in a row (the default allowed_fails): it cools now; the time it began to."""
    for _ in range(times):
        group.started(deployment)
        group.ended(deployment, "failed", None, None)
    return time.monotonic()


def test_item_4_a_hedge_starts_once_a_cooling_deployment_comes_back() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, hedge="50ms", group_extra={"cooldown": "1s"})
        group = client.router.group("chat")
        fakes["east"].delay(30)
        cooled = _cool(group, group.deployments[1])  # west sits out 1 s: nothing to hedge to at 50 ms
        answer = client.complete("chat", "hi", timeout=15)
        assert (answer.provider, fakes["west"].received) == ("west", 1)  # hedged once west came back
        assert fakes["west"].arrivals[0] - cooled >= 0.95  # not before its cooldown ended
        assert fakes["east"].hung_up.wait(10) and fakes["east"].answered == 0  # the loser cancelled, as ever
        [hedged] = recorder.of(Hedged)
        assert (hedged.hedge, hedged.won) == ("west:gpt-4o-mini", True)


class _Window:
    """A deployment's rpm window, scripted: full at the first look, with room from the second on."""

    limited = True

    def __init__(self) -> None:
        self.looks: list[float] = []

    def take(self, tokens: int, reserve: float = 0.0) -> float | None:
        self.looks.append(reserve)
        return 0.2 if len(self.looks) == 1 else None


def test_item_4_a_hedge_starts_once_a_window_frees() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, hedge="50ms")
        west = client.router.group("chat").deployments[1]
        west.windows = window = _Window()  # type: ignore[assignment]
        fakes["east"].delay(30)
        answer = client.complete("chat", "hi", timeout=15)
        assert answer.provider == "west" and len(window.looks) == 2  # full at the hedge, taken when it freed
        assert window.looks == [0.0, 0.0]  # a hedge may use the window's reserve
        assert fakes["east"].hung_up.wait(10) and recorder.of(Hedged)[0].won


def test_item_4_a_watching_race_never_hedges_past_the_deadline_nor_to_a_cooling_one() -> None:
    with slow_servers() as fakes:
        client, recorder = _client(fakes, hedge="50ms", group_extra={"cooldown": "30s"})
        group = client.router.group("chat")
        fakes["east"].delay(30)
        _cool(group, group.deployments[1])
        started = time.monotonic()
        with pytest.raises(LLMDeadlineExceededError):
            client.complete("chat", "hi", timeout=1.0)
        assert time.monotonic() - started < 10 and fakes["east"].hung_up.wait(10)
        assert fakes["west"].received == 0 and recorder.of(Hedged) == []


def test_item_4_a_hedge_uses_the_reserve_first_attempts_leave() -> None:
    with slow_servers() as fakes:
        deployments = [{"model": "east:gpt-4o-mini"}, {"model": "west:gpt-4o-mini", "rpm": 2}]
        client, recorder = _client(fakes, hedge="50ms", group_extra={"hedge_reserve": 0.5, "deployments": deployments})
        west = client.router.group("chat").deployments[1]
        assert west.windows.take(1, 0.5) is None  # a first attempt took west's 1 of 2 outside the reserve
        assert west.windows.take(1, 0.5) is not None  # the next first attempt skips it: the other is the reserve
        fakes["east"].delay(30)
        assert client.complete("chat", "hi", timeout=15).provider == "west"  # the hedge took the reserve
        assert west.windows.take(1) is not None  # the window is full now
        assert fakes["east"].hung_up.wait(10) and recorder.of(Hedged)[0].won


@pytest.mark.parametrize("shared", [False, True], ids=["memory", "redis"])
def test_item_4_a_deployment_that_lost_a_race_reads_slow_to_the_latency_strategy(
    shared: bool, request: pytest.FixtureRequest
) -> None:
    extra = {"limits": {"storage": request.getfixturevalue("redis_server").url}} if shared else {}
    with slow_servers() as fakes:
        client, _ = _client(fakes, group_extra={"strategy": "latency"}, **extra)
        group = client.router.group("chat")
        keys = [d.key for d in group.deployments]
        fakes["east"].delay(30)
        assert client.complete("chat", "hi").provider == "west"  # hedged after 100 ms; east cancelled
        assert fakes["east"].hung_up.wait(10)
        east, west = group.board.read(keys, None)
        assert east.latency is not None and east.latency >= 0.1  # its 100+ ms without an answer counted
        assert west.latency is not None and west.latency < east.latency
        by_weight_east_first = lambda: 0.2  # noqa: E731  (and past the strategy's exploring share)
        candidates = list(zip(group.deployments, group.board.read(keys, None), strict=True))
        assert ordered("latency", candidates, by_weight_east_first)[0] is group.deployments[1]  # west first now
