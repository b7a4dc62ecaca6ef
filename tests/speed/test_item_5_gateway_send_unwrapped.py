"""Issue 34 item 5: the API routes' answers are sent through no overhead-header wrapper of ``send``.

Every answer carries ``x-llmplex-overhead-ms``. The API routes' answers set it themselves, yet their ``send`` was
still wrapped by ``_timed`` (a coroutine frame and a headers scan for every message: a stream's every chunk),
which added the header only to what lacked it: the door's refusals and a gone client's 499. Those now set it
themselves (the door reads the request's arrival from the scope, ``ARRIVED``), and the API routes are sent
unwrapped. What must not change: the header on every answer (whole, streamed, failed, refused by the door, and
on the other routes, still wrapped).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from llmplex.gateway import app as gateway_app
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config
from tests.gateway.keyed_support import bearer
from tests.tenancy.guard_support import guarded_gateway

ECHO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with guarded_gateway(gateway_config(gateway={"auth_failures": 2})) as running:
        yield running


def test_item_5_gateway_api_answers_and_door_refusals_carry_the_header_unwrapped(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapped: list[Any] = []
    real = gateway_app._timed

    def counting(send: Any) -> Any:
        wrapped.append(send)
        return real(send)

    monkeypatch.setattr(gateway_app, "_timed", counting)
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        answers = [
            http.post("/v1/chat/completions", json=ECHO, headers=bearer(MASTER_KEY)),
            http.post("/v1/messages", json={**ECHO, "max_tokens": 10}, headers=bearer(MASTER_KEY)),
            http.post("/v1/chat/completions", content=b"not json", headers=bearer(MASTER_KEY)),
        ]
        stream = {**ECHO, "stream": True}
        with http.stream("POST", "/v1/chat/completions", json=stream, headers=bearer(MASTER_KEY)) as streamed:
            assert b"[DONE]" in streamed.read()
        answers.append(streamed)
        assert wrapped == []  # none of the API routes' answers went through the wrapper
        answers += [http.post("/v1/chat/completions", json=ECHO, headers=bearer("wrong")) for _ in range(2)]
        answers.append(http.post("/v1/chat/completions", json=ECHO, headers=bearer("wrong")))  # the door's 429
        assert wrapped == []
        live = http.get("/health/liveness")  # another route: still wrapped
    assert [a.status_code for a in answers] == [200, 200, 400, 200, 401, 401, 429]
    assert answers[-1].json()["error"]["type"] == "rate_limit_error"
    for answer in [*answers, live]:
        assert float(answer.headers["x-llmplex-overhead-ms"]) >= 0, answer
    assert len(wrapped) == 1
