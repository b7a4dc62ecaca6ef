"""``abatch``/``batch``: every request ends as a Response or an LLMError, in order, with bounded concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import llmplex
from llmplex import LLMBadRequestError, LLMConfigurationError, LLMError, Response, hookimpl
from llmplex.events import Event, PromptExecuted, RequestFailed, RequestStarted
from llmplex.providers.mock import MockBackend


class InFlight:
    """Observer measuring the most requests in flight at once."""

    def __init__(self) -> None:
        self.now = self.most = 0

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        if isinstance(event, RequestStarted):
            self.now += 1
            self.most = max(self.most, self.now)
        elif isinstance(event, PromptExecuted | RequestFailed):
            self.now -= 1


async def test_results_come_back_in_request_order_with_bounded_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    take = MockBackend.take

    def slow_every_third(self: MockBackend, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        raw, _ = take(self, payload)  # the echo of the prompt
        return raw, 0.02 if int(payload["messages"][-1]["content"][1:]) % 3 == 0 else 0.0

    monkeypatch.setattr(MockBackend, "take", slow_every_third)
    meter = InFlight()
    client = llmplex.Client(plugins=[meter])
    finished: list[int] = []
    results = await llmplex.abatch(
        [{"model": "mock:echo", "prompt": f"q{i}"} for i in range(20)],
        concurrency=4,
        client=client,
        on_result=lambda index, result: finished.append(index),
    )
    assert [r.text if isinstance(r, Response) else r for r in results] == [f"q{i}" for i in range(20)]
    assert finished != sorted(finished) and sorted(finished) == list(range(20))  # finished out of order
    assert meter.most == 4


async def test_echo_keeps_each_answer_with_its_request(client: llmplex.Client) -> None:
    results = await llmplex.abatch([{"model": "mock:m", "prompt": f"number {i}"} for i in range(50)], client=client)
    assert [r.text for r in results if isinstance(r, Response)] == [f"number {i}" for i in range(50)]


async def test_failures_are_returned_in_place(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push_error(LLMBadRequestError("bad", status_code=400))
    results = await llmplex.abatch(
        [
            {"model": "mock:m", "prompt": "first"},
            {"model": "mock:m", "prompt": "second"},
            {"model": "mock:m"},
            {"model": "nowhere:m", "prompt": "x"},
            {"model": "mock:m", "prompt": "x", "temprature": 1},
            "not a dict",  # type: ignore[list-item]
            {"model": "mock:m", "messages": [{"role": "user", "content": "as messages"}]},
        ],
        concurrency=1,
        client=client,
    )
    assert isinstance(results[0], LLMBadRequestError)
    assert isinstance(results[1], Response) and results[1].text == "second"
    assert isinstance(results[2], LLMConfigurationError) and "needs a 'prompt'" in results[2].message
    assert isinstance(results[3], LLMConfigurationError) and "unknown provider 'nowhere'" in results[3].message
    assert isinstance(results[4], LLMConfigurationError) and "temprature" in results[4].message
    assert isinstance(results[5], LLMConfigurationError) and "must be a dict" in results[5].message
    assert isinstance(results[6], Response) and results[6].text == "as messages"


async def test_unexpected_exceptions_become_llm_errors(client: llmplex.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    async def bug(*args: object, **kwargs: object) -> Response:
        raise ZeroDivisionError("a bug below the API")

    monkeypatch.setattr(client, "acomplete", bug)
    results = await llmplex.abatch([{"model": "mock:m", "prompt": "x"}], client=client)
    assert isinstance(results[0], LLMError)
    assert results[0].message == "the request failed unexpectedly: ZeroDivisionError: a bug below the API"
    assert isinstance(results[0].cause, ZeroDivisionError)


def test_sync_batch(client: llmplex.Client) -> None:
    results = llmplex.batch([{"model": "mock:m", "prompt": "a"}, {"model": "mock:m", "prompt": "b"}], client=client)
    assert [r.text for r in results if isinstance(r, Response)] == ["a", "b"]


async def test_sync_batch_inside_a_loop_says_to_await(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="await abatch"):
        llmplex.batch([{"model": "mock:m", "prompt": "a"}], client=client)
    await asyncio.sleep(0)


async def test_concurrency_is_checked(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="concurrency must be a whole number >= 1"):
        await llmplex.abatch([], concurrency=0, client=client)
    assert await llmplex.abatch([], client=client) == []


def test_default_client_is_used() -> None:
    results = llmplex.batch([{"model": "mock:m", "prompt": "default"}])
    assert isinstance(results[0], Response) and results[0].text == "default"
