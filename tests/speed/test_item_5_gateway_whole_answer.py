"""Issue 34 item 5: a whole answer's upstream call runs in the request's own task.

``Pipeline.complete`` made the call a task of its own and waited with ``asyncio.wait`` for it or the client's
disconnect (a task, a waiter and two callbacks per request, and the loop's extra steps to hand the answer
over). Now the call is awaited by the request's task and a watcher cancels that task when the client leaves.
What must not change: a client that leaves cancels the call and the request ends as a ``ConnectionError`` (its
499 row), with the request's task no longer cancelled; the server's own cancellation (shutdown) stays a
cancellation; a call that swallows the cancellation is still answered to nobody; an upstream failure is the
gateway's error; no watcher is left behind.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest

from llmplex.config.schema import GatewayConfig
from llmplex.errors import LLMServerError
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.pipeline import Exchange, Pipeline
from llmplex.types import Response

ANSWER = Response(text="hi", model="m", provider="p")


class Upstream:
    """A client whose ``acomplete`` answers at once, waits for ever, or swallows a cancellation and answers."""

    def __init__(self, how: str = "answer") -> None:
        self.how = how
        self.task: asyncio.Task[Any] | None = None
        self.began = asyncio.Event()
        self.cancelled = False

    async def acomplete(self, model: str, messages: Any, **kwargs: Any) -> Response:
        self.task = asyncio.current_task()
        self.began.set()
        if self.how == "fail":
            raise LLMServerError("upstream broke", provider="p", model="m", status_code=502)
        if self.how in ("wait", "swallow"):
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled = True
                if self.how == "wait":
                    raise
        return ANSWER


class Client:
    """What the request sends: nothing until ``leave`` (then ``http.disconnect``)."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}


def complete(upstream: Upstream, client: Client) -> Any:
    fake: Any = upstream
    pipeline = Pipeline(fake, GatewayConfig(), None)  # type: ignore[arg-type]
    exchange = Exchange("req_test", "chat.completions", "openai", time.perf_counter(), time.time())
    spec: Any = SimpleNamespace(model="m", messages=[], kwargs={}, stream=False)
    request: Any = SimpleNamespace(receive=client.receive, scope={})  # no CONNECTION_LOST: a watcher task
    return pipeline.complete(exchange, request, spec, SimpleNamespace(call_args={}))  # type: ignore[arg-type]


def others() -> set[asyncio.Task[Any]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


def test_item_5_a_whole_answer_is_called_in_the_requests_own_task() -> None:
    async def run() -> None:
        upstream = Upstream()
        assert await complete(upstream, Client()) is ANSWER
        assert upstream.task is asyncio.current_task()
        await asyncio.sleep(0)
        assert not others()  # the watcher is gone

    asyncio.run(run())


def test_item_5_a_client_that_leaves_cancels_the_call_and_the_request_goes_on() -> None:
    async def run() -> None:
        upstream, client = Upstream("wait"), Client()
        calling = asyncio.ensure_future(complete(upstream, client))
        await upstream.began.wait()
        client.gone.set()
        with pytest.raises(ConnectionError):
            await calling
        assert upstream.cancelled and upstream.task is not None and upstream.task.cancelling() == 0
        await asyncio.sleep(0)
        assert not others()

    asyncio.run(run())


def test_item_5_the_servers_cancellation_stays_a_cancellation() -> None:
    async def run(leaves_too: bool) -> None:
        upstream, client = Upstream("wait"), Client()
        calling = asyncio.ensure_future(complete(upstream, client))
        await upstream.began.wait()
        if leaves_too:
            client.gone.set()
            await asyncio.sleep(0)
        calling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await calling
        assert upstream.cancelled

    asyncio.run(run(leaves_too=False))
    asyncio.run(run(leaves_too=True))


def test_item_5_a_call_that_swallows_the_cancellation_is_answered_to_nobody() -> None:
    async def run() -> None:
        upstream, client = Upstream("swallow"), Client()
        calling = asyncio.ensure_future(complete(upstream, client))
        await upstream.began.wait()
        client.gone.set()
        with pytest.raises(ConnectionError):
            await calling
        assert upstream.cancelled and upstream.task is not None and upstream.task.cancelling() == 0

    asyncio.run(run())


def test_item_5_an_upstream_failure_is_the_gateways_error() -> None:
    async def run() -> None:
        with pytest.raises(GatewayError) as failed:
            await complete(Upstream("fail"), Client())
        assert failed.value.status == 502 and failed.value.provider == "p"
        await asyncio.sleep(0)
        assert not others()

    asyncio.run(run())
