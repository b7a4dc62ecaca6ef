"""The mock plugin's own hooks: a scripted delay longer than the SDK timeout ends in ``TimeoutError``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from llmplex.engine.request_builder import build_request
from llmplex.providers import mock


def _payload() -> dict[str, Any]:
    return mock.llmplex_format(build_request("echo", "hi"))


def _drain(events: Any) -> list[Any]:
    return list(events)


async def _adrain(events: Any) -> list[Any]:
    return [event async for event in await events]


SENDS = {
    "call": lambda backend, timeout: mock.llmplex_call(_payload(), backend, timeout),
    "acall": lambda backend, timeout: asyncio.run(mock.llmplex_acall(_payload(), backend, timeout)),
    "stream": lambda backend, timeout: _drain(mock.llmplex_stream(_payload(), backend, timeout)),
    "astream": lambda backend, timeout: asyncio.run(_adrain(mock.llmplex_astream(_payload(), backend, timeout))),
}


@pytest.mark.parametrize("hook", SENDS)
def test_a_delay_past_the_timeout_raises_timeout_error(hook: str) -> None:
    backend = mock.MockBackend()
    backend.push("too late", delay=30.0)
    with pytest.raises(TimeoutError, match=r"longer than the 0\.010s timeout"):
        SENDS[hook](backend, 0.01)


@pytest.mark.parametrize("hook", SENDS)
def test_a_delay_within_the_timeout_answers(hook: str) -> None:
    backend = mock.MockBackend()
    backend.push("in time", delay=0.01)
    answer = SENDS[hook](backend, 5.0)
    text = answer["text"] if isinstance(answer, dict) else "".join(chunk.get("text", "") for chunk in answer)
    assert text == "in time"


@pytest.mark.parametrize("hook", SENDS)
def test_a_scripted_error_is_raised_after_its_delay(hook: str) -> None:
    backend = mock.MockBackend()
    backend.push_error(ConnectionResetError("reset"), delay=0.01)
    with pytest.raises(ConnectionResetError):
        SENDS[hook](backend, None)
