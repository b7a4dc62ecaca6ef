"""Issue 12 item 16: concurrent calls cannot overshoot a token budget by more than one request.

Each request reserves its estimate (prompt characters / 4, rounded up, plus max_tokens) before
it is sent and settles to the usage reported after. The mock provider counts one token per
word, so the prompts below use words of 4+ letters: the estimate is never below the real use.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import llmplex
from llmplex import Budget, BudgetTracker, Deadline, LLMBudgetExceededError, LLMDeadlineExceededError, Response
from tests.support.late import Late

CAP = 20
CALLS = 50
PROMPT = "tell me more"  # 12 characters: estimated 3 input tokens; the mock counts 3 words


def _spent_within_one_request(tracker: BudgetTracker, results: list[object]) -> list[Response]:
    answers = [r for r in results if isinstance(r, Response)]
    refused = [r for r in results if isinstance(r, LLMBudgetExceededError)]
    assert len(answers) + len(refused) == CALLS, [r for r in results if not isinstance(r, (Response, Exception))]
    one_request = max(r.usage.total_tokens for r in answers)
    spent = tracker.snapshot().total_tokens
    assert spent == sum(r.usage.total_tokens for r in answers)
    assert spent <= CAP + one_request, (spent, len(answers))
    assert spent >= CAP - one_request, (spent, len(answers))  # the budget was used, not refused early
    assert tracker.snapshot().requests == len(answers)
    return answers


@pytest.mark.parametrize("max_tokens", [3, None], ids=["max_tokens", "unbounded-answers"])
def test_item_16_fifty_concurrent_async_calls_stay_within_one_request_of_a_20_token_cap(
    max_tokens: int | None,
) -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=CAP))
    client = llmplex.Client(budget=tracker)

    async def one() -> object:
        try:
            return await client.acomplete("mock:m", PROMPT, max_tokens=max_tokens)
        except llmplex.LLMError as error:
            return error

    async def run() -> list[object]:
        return list(await asyncio.gather(*(one() for _ in range(CALLS))))

    _spent_within_one_request(tracker, asyncio.run(run()))


def test_item_16_abatch_with_a_20_token_cap_stays_within_one_request() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=CAP))
    client = llmplex.Client(budget=tracker)
    requests = [{"model": "mock:m", "prompt": PROMPT, "max_tokens": 3} for _ in range(CALLS)]
    results = asyncio.run(llmplex.abatch(requests, concurrency=CALLS, client=client))
    answers = _spent_within_one_request(tracker, list(results))
    assert [type(r).__name__ for r in results[: len(answers)]].count("Response") >= 1


def test_item_16_fifty_threads_with_the_sync_api_stay_within_one_request_of_the_cap() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=CAP))
    client = llmplex.Client()
    backend = client.provider_client("mock")
    for _ in range(CALLS):  # each answer takes a while, so the calls really overlap
        backend.push("fine then", usage={"input_tokens": 3, "output_tokens": 2}, delay=0.02)

    def one(_: int) -> object:
        try:
            return client.complete("mock:m", PROMPT, max_tokens=2, budget=tracker)
        except llmplex.LLMError as error:
            return error

    with ThreadPoolExecutor(max_workers=CALLS) as pool:
        results = list(pool.map(one, range(CALLS)))
    _spent_within_one_request(tracker, results)


def test_item_16_concurrent_streams_stay_within_one_request_of_the_cap() -> None:
    tracker = BudgetTracker(Budget(max_output_tokens=CAP))
    client = llmplex.Client(budget=tracker)

    async def one() -> object:
        try:
            events = [e async for e in client.astream("mock:m", "alpha bravo charlie delta", max_tokens=4)]
        except llmplex.LLMError as error:
            return error
        return events[-1].response

    async def run() -> list[object]:
        return list(await asyncio.gather(*(one() for _ in range(CALLS))))

    results = asyncio.run(run())
    answers = [r for r in results if isinstance(r, Response)]
    assert all(isinstance(r, (Response, LLMBudgetExceededError)) for r in results)
    assert CAP - 4 <= tracker.snapshot().output_tokens <= CAP + 4, (tracker.snapshot(), len(answers))


def test_item_16_a_request_waits_for_room_held_by_one_in_flight_and_is_bounded_by_its_deadline() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=CAP))
    client = llmplex.Client(budget=tracker)
    backend = client.provider_client("mock")
    backend.push("slow answer", usage={"input_tokens": 3, "output_tokens": 2}, delay=1.0)
    slow = threading.Thread(target=client.complete, args=("mock:m", PROMPT), kwargs={"max_tokens": 12})
    slow.start()  # reserves 3 + 12 = 15 of the 20 tokens for a second
    while not backend.calls:
        time.sleep(0.005)
    deadline = Deadline.after(0.3)
    late = Late(deadline)  # a wall-clock bound broke when a busy machine kept the caller from its CPU
    with pytest.raises(LLMDeadlineExceededError, match="before the request could be sent"):
        client.complete("mock:m", PROMPT, max_tokens=12, deadline=deadline)  # 15 more would not fit: it waits
    seconds = late.seconds()
    assert seconds < 0.25, late.describe(seconds)  # bounded by the deadline, not by the slow call's second
    assert len(backend.calls) == 1  # it was never sent
    slow.join()
    assert client.complete("mock:m", PROMPT, max_tokens=12).text == "tell me more"  # 5 + 15 fits now


def test_item_16_an_abandoned_stream_settles_and_a_cancelled_task_gives_its_reservation_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=CAP))
    client = llmplex.Client(budget=tracker)
    waits = threading.Event()  # set when a request begins to wait for room on the tracker
    wait = tracker.wait

    def noted_wait(version: int, timeout: float | None) -> None:
        waits.set()
        wait(version, timeout)

    monkeypatch.setattr(tracker, "wait", noted_wait)
    stream = client.stream("mock:m", "alpha bravo charlie delta echo", max_tokens=10)  # reserves 8 + 10
    assert next(stream).type == "text"
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(client.complete, "mock:m", PROMPT, max_tokens=10)
        assert waits.wait(10)  # the call waits for room (a bound, not a margin) ...
        assert not waiting.done()  # ... as 13 more tokens do not fit beside the open stream's 18
        stream.close()
        assert waiting.result(timeout=5).text == "tell me more"
    # the abandoned stream had begun to answer: its tokens were spent, so it counts its reservation (issue 21
    # item 3) instead of holding it; the call that waited ran alone after it (3 + 3 tokens)
    assert tracker.snapshot().total_tokens == 18 + 6

    tracker = BudgetTracker(Budget(max_total_tokens=CAP))
    client = llmplex.Client(budget=tracker)

    async def cancel_one() -> Response:
        backend = client.provider_client("mock", asynchronous=True)
        backend.push("never read", delay=30)
        sent = len(backend.calls)
        taken = asyncio.Event()  # set when the mock has taken a request (it then waits out its delay)
        loop, take = asyncio.get_running_loop(), backend.take

        def noted_take(payload: dict[str, Any]) -> Any:
            answer = take(payload)
            loop.call_soon_threadsafe(taken.set)
            return answer

        monkeypatch.setattr(backend, "take", noted_take)
        task = asyncio.create_task(client.acomplete("mock:m", PROMPT, max_tokens=12))
        await asyncio.wait_for(taken.wait(), 10)  # the task reserves and sends, then waits for its slow answer
        assert len(backend.calls) == sent + 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await asyncio.wait_for(client.acomplete("mock:m", "ok", max_tokens=1, timeout=5), 5)

    assert asyncio.run(cancel_one()).text == "ok"
