"""Issue 34 item 5: the ``Door``'s watch on a keyed request's answer adds no coroutine to every message sent.

With the failed-authentication throttle on (``llmplex serve``'s default), the door wraps ``send`` of every
request that presents a key to see whether its answer is a 401 (or marked failed). The wrapper was a coroutine
function: every message of every answer (a stream's every chunk) made and ran one more coroutine. It now hands
on what the server's ``send`` gives to await, and only an answer counted as a failed authentication takes a
coroutine of its own (the count first, then the message). What must not change: a 401 or a marked answer counts
before it is sent; other answers count nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llmplex.gateway.guard.door import Door, mark_failed_authentication


class Throttle:
    failures, window = 5, 60

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def retry_after(self, address: str) -> float | None:
        return None

    async def failed(self, address: str) -> None:
        self.log.append(f"failed {address}")


class Sent:
    """What the server's ``send`` returns: an awaitable that logs the message once awaited."""

    def __init__(self, log: list[str], message: dict[str, Any]) -> None:
        self.log, self.message = log, message

    def __await__(self) -> Any:
        self.log.append(f"sent {self.message['type']} {self.message.get('status', '')}".strip())
        return iter(())


def _serve(status: int, marked: bool = False) -> tuple[list[str], list[object]]:
    log: list[str] = []
    handed: list[object] = []

    def send(message: dict[str, Any]) -> Sent:
        return Sent(log, message)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if marked:
            mark_failed_authentication(scope)
        for message in (
            {"type": "http.response.start", "status": status, "headers": []},
            {"type": "http.response.body", "body": b"a", "more_body": True},
            {"type": "http.response.body", "body": b""},
        ):
            awaitable = send(message)
            handed.append(awaitable)
            await awaitable

    door = Door(app, Throttle(log), max_in_flight_per_key=10)  # type: ignore[arg-type]
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/v1/chat/completions"}
    scope.update(client=("10.0.0.1", 5), headers=[(b"authorization", b"Bearer sk-some-key")])
    asyncio.run(door(scope, None, send))
    return log, handed


def test_item_5_door_hands_on_the_servers_send_for_every_message() -> None:
    log, handed = _serve(200)
    assert all(isinstance(awaitable, Sent) for awaitable in handed)  # no coroutine of the door's per message
    assert log == ["sent http.response.start 200", "sent http.response.body", "sent http.response.body"]


def test_item_5_door_counts_a_failed_authentication_before_its_answer() -> None:
    for status, marked in ((401, False), (403, True)):
        log, handed = _serve(status, marked)
        assert log == ["failed 10.0.0.1", f"sent http.response.start {status}", *["sent http.response.body"] * 2]
        assert all(isinstance(awaitable, Sent) for awaitable in handed[1:])
