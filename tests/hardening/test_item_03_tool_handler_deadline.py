"""Issue 12 item 3: tool handlers are held to the call's deadline.

A handler that never returns used to hang the tool loop forever. Now a sync handler runs on a worker thread
that the call leaves at the deadline, an async one is cancelled, and the call raises
``LLMDeadlineExceededError`` naming the tool, within T + 50 ms, from sync and async code alike (a sync handler
under ``acomplete``, an async one under ``complete``). The handler's ``ToolContext`` changes are rolled back.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, ToolContext, hookimpl
from tests.support.late import Late

T = 0.4
OVERRUN = 0.05

_release = threading.Event()  # set after each test so the left-behind sync handlers end


@pytest.fixture(autouse=True)
def _release_handlers() -> Iterator[None]:
    _release.clear()
    yield
    _release.set()


def stuck(city: str) -> str:
    """A sync tool that never returns (until the test ends)."""
    _release.wait()
    return f"{city}: sunny"


async def astuck(city: str) -> str:
    """An async tool that never returns."""
    await asyncio.Event().wait()
    return f"{city}: sunny"


def stuck_after_writing(ctx: ToolContext, city: str) -> str:
    """Changes the shared state, then never returns."""
    ctx.state["visited"].append(city)
    _release.wait()
    return "done"


class Seen:
    """An observer keeping the ToolInvoked events."""

    def __init__(self) -> None:
        self.tools: list[llmplex.ToolInvoked] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.ToolInvoked):
            self.tools.append(event)


def _asking_for(handler: Callable[..., Any], seen: Seen | None = None) -> llmplex.Client:
    client = llmplex.Client(plugins=[seen] if seen else [])
    client.complete("mock:m", "warm up", tools=[handler])  # plugins and the schema check loaded before the clock
    if seen:
        seen.tools.clear()
    client.provider_client("mock").push(tool_calls=[{"name": handler.__name__, "arguments": '{"city": "Oslo"}'}])
    return client


def _ends_at_deadline(run: Callable[[Deadline], object]) -> LLMDeadlineExceededError:
    deadline = Deadline.after(T)
    late = Late(deadline)  # the time a busy machine keeps the caller waiting for a CPU is not counted
    with pytest.raises(LLMDeadlineExceededError) as info:
        run(deadline)
    seconds = late.seconds()
    assert seconds < OVERRUN, late.describe(seconds)
    return info.value


@pytest.mark.parametrize("handler", [stuck, astuck], ids=["sync-handler", "async-handler"])
def test_item_03_complete_ends_at_the_deadline_naming_the_tool_that_overran(handler: Callable[..., Any]) -> None:
    seen = Seen()
    client = _asking_for(handler, seen)
    error = _ends_at_deadline(lambda when: client.complete("mock:m", "weather?", tools=[handler], deadline=when))
    assert f"tool {handler.__name__!r}" in error.message and error.context["tool"] == handler.__name__
    assert [event.name for event in seen.tools] == [handler.__name__] and seen.tools[0].error


@pytest.mark.parametrize("handler", [stuck, astuck], ids=["sync-handler", "async-handler"])
def test_item_03_acomplete_ends_at_the_deadline_naming_the_tool_that_overran(handler: Callable[..., Any]) -> None:
    client = _asking_for(handler)

    def run(deadline: Deadline) -> object:
        return asyncio.run(client.acomplete("mock:m", "weather?", tools=[handler], deadline=deadline))

    error = _ends_at_deadline(run)
    assert error.context["tool"] == handler.__name__


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_item_03_a_tool_that_overran_leaves_no_trace_in_the_tool_context(mode: str) -> None:
    context = ToolContext(state={"visited": []})
    client = _asking_for(stuck_after_writing)
    kwargs: dict[str, Any] = {"tools": [stuck_after_writing], "tool_context": context}

    def run(deadline: Deadline) -> object:
        if mode == "complete":
            return client.complete("mock:m", "go", deadline=deadline, **kwargs)
        return asyncio.run(client.acomplete("mock:m", "go", deadline=deadline, **kwargs))

    _ends_at_deadline(run)
    assert context.state == {"visited": []}
