"""Issue 34 items 2 and 3: what core's call path asks once per attempt, and what it skips when nothing needs it.

Whether an observer listens is asked once per attempt (it was asked four times per call): the attempt's events
go by that answer. An observer switched on during an attempt hears from the next one, whole (no attempt's
events begin halfway); one switched off hears nothing more at once (delivery asks again). A request holding
nothing an instance could refuse or leave out goes on as it is, without the full look ``adapt`` gives the
others, which is the same answer. An attempt with nothing reserved settles without touching anything.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from types import FrameType, SimpleNamespace
from typing import Any

import llmplex_otel
import pytest

from llmplex import LLMRateLimitError, hookimpl
from llmplex.client import Client
from llmplex.engine import attempt as attempt_module
from llmplex.engine.adapt import Adapted, adapt, plain
from llmplex.engine.attempt import Attempt
from llmplex.engine.request_builder import build_request
from llmplex.engine.retrier import Retrier
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.events import CallEnded, Event, PromptExecuted, PromptRendered, RequestStarted
from llmplex.provider import Capabilities
from llmplex.types import Image, Message, ReasoningPart, Request, Tool, ToolCall
from tests.speed.test_item_1_idle_observers import quiet_logger  # noqa: F401  (autouse: no llmplex log level enabled)

OTHER_OBSERVERS = ["recorder", "exitobserver"]  # the test distribution's always-on observers


class Gate:
    """An observer whose idle check answers from ``answers`` in turn (then the last one), counting the asks."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.asked = 0
        self.events: list[Event] = []

    @hookimpl
    def llmplex_observing(self) -> bool:
        self.asked += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        self.events.append(event)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    llmplex_otel.uninstrument()
    client = Client(disabled=OTHER_OBSERVERS)
    client.complete("mock:echo", "warm")
    yield client
    client.close()


@pytest.fixture
def gate(client: Client) -> Iterator[Gate]:
    """An idle observer, registered for one test."""
    gate = Gate(False)
    client.host.register_observer(gate)
    yield gate
    client.host.unregister_observer(gate)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_item_2_whether_anyone_listens_is_asked_once_per_call(client: Client, gate: Gate, asynchronous: bool) -> None:
    if asynchronous:
        assert asyncio.run(client.acomplete("mock:echo", "hi")).text == "hi"
    else:
        assert client.complete("mock:echo", "hi").text == "hi"
    assert gate.asked == 1
    assert gate.events == []


def test_item_2_a_retried_call_asks_once_per_attempt(client: Client, gate: Gate) -> None:
    client.provider_client("mock").push_error(LLMRateLimitError("slow down", retry_after=0))
    assert client.complete("mock:echo", "again", throttle={"max_attempts": 2}).text == "again"
    assert gate.asked == 2


def test_item_2_a_stream_asks_once(client: Client, gate: Gate) -> None:
    assert "".join(e.text or "" for e in client.stream("mock:echo", "a b c") if e.type == "text") == "a b c"
    assert gate.asked == 1


def test_item_2_hostile_observer_switched_on_during_an_attempt_hears_the_next_one_whole(client: Client) -> None:
    late = Gate(False, True)  # idle when the attempt begins, listening at every later ask
    client.host.register_observer(late)
    try:
        client.complete("mock:echo", "first")
        assert late.events == []  # nothing from halfway through the attempt
        client.complete("mock:echo", "second")
    finally:
        client.host.unregister_observer(late)
    kinds = [type(e) for e in late.events]
    assert kinds[0] is RequestStarted and kinds[-1] is CallEnded
    assert {PromptRendered, PromptExecuted} <= set(kinds)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_item_2_hostile_observer_switched_off_during_an_attempt_hears_nothing_more(
    client: Client, asynchronous: bool
) -> None:
    leaving = Gate(True, False)  # listening when the attempt begins, idle at delivery and after
    client.host.register_observer(leaving)
    try:
        if asynchronous:
            asyncio.run(client.acomplete("mock:echo", "bye"))
        else:
            client.complete("mock:echo", "bye")
    finally:
        client.host.unregister_observer(leaving)
    assert leaving.events == []


def test_item_2_an_active_observer_still_gets_every_event(client: Client) -> None:
    active = Gate(True)
    client.host.register_observer(active)
    try:
        client.complete("mock:echo", "all")
    finally:
        client.host.unregister_observer(active)
    kinds = [type(e) for e in active.events]
    assert kinds == [RequestStarted, PromptRendered, PromptExecuted, CallEnded]


PLAIN = Capabilities(tools=False, prompt_cache=False, sampling_options=frozenset())


def _requests() -> list[Request]:
    image = Image(data=b"\x89PNG\r\n\x1a\n", media_type="image/png")
    plain = build_request("m", [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    return [
        plain,
        build_request("m", "hi", options={"temperature": 0.5}),
        build_request("m", "hi", tools=[Tool(name="t", description="d", parameters={"type": "object"})]),
        build_request("m", "hi", previous_response_id="resp_1"),
        plain.model_copy(update={"prompt_cache": "auto"}),
        build_request("m", [Message.user("cached", cache=True)]),
        build_request("m", [Message.user(["look", image])]),
        build_request("m", [Message.user("q"), Message.assistant(None, (ToolCall(id="c1", name="t"),))]),
        build_request(
            "m", [Message.user("q"), Message.assistant("a", reasoning=(ReasoningPart(format="x", data={"k": 1}),))]
        ),
    ]


def _attempt(capabilities: Capabilities, drop: bool) -> Attempt:
    """An attempt on an instance ``p`` with ``capabilities`` for every model."""
    instance = SimpleNamespace(name="p", capabilities_for=lambda model: capabilities, drop_unsupported=drop)
    return Attempt(SimpleNamespace(provider=instance))  # type: ignore[arg-type]


def _outcome(adapting: Callable[[], Adapted]) -> object:
    try:
        return adapting()
    except LLMConfigurationError as error:
        return str(error)


def test_item_2_the_requests_are_plain_and_not() -> None:
    assert [plain(r) for r in _requests()] == [True, False, False, False, False, False, False, True, False]


@pytest.mark.parametrize("request_", _requests())
@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("capabilities", [PLAIN, Capabilities()])
def test_item_2_an_attempts_adapt_gives_the_full_looks_answer(
    request_: Request, drop: bool, capabilities: Capabilities
) -> None:
    found = _outcome(lambda: _attempt(capabilities, drop).adapt(request_))
    assert found == _outcome(lambda: adapt(request_, "p", capabilities, drop))
    if plain(request_):
        assert isinstance(found, Adapted) and found.request is request_ and found.dropped == ()


def test_item_2_a_plain_request_skips_the_full_look(monkeypatch: pytest.MonkeyPatch) -> None:
    def looked(*args: object) -> Capabilities:
        raise AssertionError("a plain request needs no capabilities and no full look")

    monkeypatch.setattr(attempt_module, "adapt", looked)
    instance = SimpleNamespace(name="p", capabilities_for=looked, drop_unsupported=False)
    request = build_request("m", [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}])
    adapted = Attempt(SimpleNamespace(provider=instance)).adapt(request)  # type: ignore[arg-type]
    assert adapted.request is request and adapted.dropped == ()


def test_item_2_an_attempt_with_nothing_reserved_settles_without_touching_anything(client: Client) -> None:
    call = client._call("mock:echo", "hi", False, {})
    retrier = call.pipeline.retrier
    held = retrier._held
    call.complete()
    assert retrier._held is held  # no list swapped in: nothing was held, nothing settled


def test_item_2_the_model_an_answer_is_priced_by_is_worked_out_once(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llmplex.types import pricing

    client.complete("mock:echo", "first")
    asked: list[tuple[str, str]] = []
    key = pricing.price_key

    def counted(plugin: str, model: str) -> pricing.PriceKey | None:
        asked.append((plugin, model))
        return key(plugin, model)

    monkeypatch.setattr(pricing, "price_key", counted)
    assert client.complete("mock:echo", "second").text == "second"
    assert asked == []


def _awaiting(client: Client, prompt: str, **kwargs: Any) -> list[str]:
    """The functions on the stack when the mock's async hook takes its answer (awaiting frames included)."""
    backend = client.provider_client("mock", asynchronous=True)
    take, seen = backend.take, []

    def recorded(payload: dict[str, Any]) -> Any:
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            seen.append(frame.f_code.co_qualname)
            frame = frame.f_back
        return take(payload)

    backend.take = recorded
    try:
        assert asyncio.run(client.acomplete("mock:echo", prompt, **kwargs)).text == prompt
    finally:
        del backend.take
    return seen


def test_item_3_an_async_call_awaits_the_hook_through_fewer_frames(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def waited(self: Retrier, stream: bool = False) -> None:
        raise AssertionError("nothing to wait for: no budget, no limits")

    monkeypatch.setattr(Retrier, "abegin", waited)
    seen = _awaiting(client, "quick")
    assert "Pipeline.acomplete" in seen and "llmplex_acall" in seen
    assert not {"Attempt.asend", "Call._anext"} & set(seen)


def test_item_3_hostile_an_async_call_with_a_budget_or_a_deadline_still_waits_and_is_held(client: Client) -> None:
    seen = _awaiting(client, "held", timeout=30, budget={"max_requests": 5})
    assert "await_before" in seen


def test_item_2_a_sync_call_without_a_deadline_calls_the_hook_with_no_layer_between(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def guarded(*args: object) -> object:
        raise AssertionError("no deadline: nothing to hold the call to")

    monkeypatch.setattr(attempt_module, "call_before", guarded)
    assert client.complete("mock:echo", "direct").text == "direct"
    with pytest.raises(LLMError, match="nothing to hold"):
        client.complete("mock:echo", "held", timeout=30)  # a deadline still holds the hook
