"""The mock plugin's own hooks: a scripted delay longer than the SDK timeout ends in ``TimeoutError``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import llmplex
from llmplex.engine.request_builder import build_request
from llmplex.providers import mock

HOOKS = ["call", "acall", "stream", "astream"]


def send(hook: str, backend: mock.MockBackend, timeout: float | None) -> Any:
    """One attempt through the mock's ``hook``: the raw answer, or the stream's chunks as a list."""
    payload = mock.llmplex_format(build_request("echo", "hi"))
    if hook == "call":
        return mock.llmplex_call(payload, backend, timeout)
    if hook == "acall":
        return asyncio.run(mock.llmplex_acall(payload, backend, timeout))
    if hook == "stream":
        return list(mock.llmplex_stream(payload, backend, timeout))

    async def drain() -> list[Any]:
        return [chunk async for chunk in await mock.llmplex_astream(payload, backend, timeout)]

    return asyncio.run(drain())


@pytest.mark.parametrize("hook", HOOKS)
def test_a_delay_past_the_timeout_raises_timeout_error(hook: str) -> None:
    backend = mock.MockBackend()
    backend.push("too late", delay=30.0)
    with pytest.raises(TimeoutError, match=r"longer than the 0\.010s timeout"):
        send(hook, backend, 0.01)


@pytest.mark.parametrize("hook", HOOKS)
def test_a_delay_within_the_timeout_answers(hook: str) -> None:
    backend = mock.MockBackend()
    backend.push("in time", delay=0.01)
    answer = send(hook, backend, 5.0)
    text = answer["text"] if isinstance(answer, dict) else "".join(chunk.get("text", "") for chunk in answer)
    assert text == "in time"


@pytest.mark.parametrize("hook", HOOKS)
def test_a_scripted_error_is_raised_after_its_delay(hook: str) -> None:
    backend = mock.MockBackend()
    backend.push_error(ConnectionResetError("reset"), delay=0.01)
    with pytest.raises(ConnectionResetError):
        send(hook, backend, None)


def test_a_scripted_refusal_and_response_id_come_back_and_the_payload_says_whether_it_streams() -> None:
    client = llmplex.Client()
    backend = client.provider_client("mock")
    backend.push(refusal="I cannot help with that.", response_id="resp_scripted")
    answer = client.complete("mock:echo", "forbidden")
    assert (answer.refusal, answer.finish_reason, answer.response_id) == (
        "I cannot help with that.",
        "refusal",
        "resp_scripted",
    )
    backend.push("streamed")
    list(client.stream("mock:echo", "stream it"))
    assert [call["stream"] for call in backend.calls] == [False, True]
