"""Issue 33 item 2: failures move to another deployment within the call; rpm/tpm skip; all cooling fails fast."""

from __future__ import annotations

import asyncio
import time

import pytest

import llmplex
from llmplex import LLMBadRequestError, LLMGroupUnavailableError, LLMServerError, Throttled
from tests.contract import fixtures_openai as fx
from tests.groups.helpers import Recorder, config, counts, servers
from tests.reliability.fakes import FakeTime
from tests.support.fault_server import Fault
from tests.support.redis_server import RedisServer


def test_item_2_a_retryable_failure_is_retried_on_the_other_deployment_at_once() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].set_random(1.0, [Fault.rate_limit(retry_after=30)])
        recorder = Recorder()
        clock = FakeTime()
        client = llmplex.Client(config(fakes), plugins=[recorder], clock=clock.clock())
        for _ in range(6):
            answer = client.complete("chat", "hi")
            assert answer.provider == "west"
        assert clock.sleeps == [] and recorder.of(Throttled) == []  # moved at once, never waited 30 s


def test_item_2_allowed_fails_in_a_row_cool_a_deployment_until_its_cooldown_ends() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503), Fault.server_error(502))
        clock = FakeTime(draw=0.0)  # the weighted order always starts with the first deployment: east
        client = llmplex.Client(config(fakes, {"cooldown": "10s", "allowed_fails": 2}), clock=clock.clock())
        assert client.complete("chat", "hi").provider == "west"  # east failed once (1 of 2)
        assert client.complete("chat", "hi").provider == "west"  # east failed twice: cools for 10 s
        before = counts(fakes)["east"]
        assert {client.complete("chat", "hi").provider for _ in range(4)} == {"west"}
        assert counts(fakes)["east"] == before == 2  # skipped while cooling: not even tried
        clock.sleep(10.5)
        assert client.complete("chat", "hi").provider == "east"


def test_item_2_a_success_resets_the_failures_in_a_row() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503), Fault.ok(), Fault.server_error(503))
        clock = FakeTime(draw=0.0)
        client = llmplex.Client(config(fakes, {"allowed_fails": 2}), clock=clock.clock())
        assert [client.complete("chat", "hi").provider for _ in range(3)] == ["west", "east", "west"]
        assert client.complete("chat", "hi").provider == "east"  # 503, ok, 503: never two in a row


def test_item_2_a_deployment_at_its_rpm_is_skipped_not_waited_on() -> None:
    with servers("east", "west") as fakes:
        settings = config(fakes)
        settings["groups"]["chat"]["deployments"][0]["rpm"] = 2
        settings["groups"]["chat"]["deployments"][0]["weight"] = 100
        client = llmplex.Client(settings)
        started = time.monotonic()
        providers = [client.complete("chat", "hi").provider for _ in range(6)]
        assert providers.count("east") == 2 and providers.count("west") == 4
        assert time.monotonic() - started < 30  # never waited a minute for east's window


def test_item_2_a_request_over_a_deployment_tpm_goes_elsewhere() -> None:
    with servers("east", "west") as fakes:
        settings = config(fakes)
        settings["groups"]["chat"]["deployments"][0].update(tpm=50, weight=100)
        client = llmplex.Client(settings)
        assert client.complete("chat", "x" * 400).provider == "west"  # ~100 tokens: more than east's whole window
        assert client.complete("chat", "hi").provider == "east"


def test_item_2_every_deployment_cooling_fails_fast_with_a_typed_retryable_error() -> None:
    with servers("east", "west") as fakes:
        for server in fakes.values():
            server.set_random(1.0, [Fault.server_error(503)])
        client = llmplex.Client(config(fakes, {"cooldown": "30s", "allowed_fails": 1}, throttle={"base_delay": 0}))
        with pytest.raises(LLMGroupUnavailableError) as caught:
            client.complete("chat", "hi")
        sent = sum(counts(fakes).values())
        assert sent == 2
        started = time.monotonic()
        with pytest.raises(LLMGroupUnavailableError) as again:
            client.complete("chat", "hi", timeout=60)
        assert time.monotonic() - started < 5 and sum(counts(fakes).values()) == sent  # nothing sent, no hang
        error = again.value
        assert error.retryable and error.group == "chat" and "chat" in str(error)
        assert error.retry_after is not None and 25 < error.retry_after <= 30
        assert error.context["deployment"] in ("east:gpt-4o-mini", "west:gpt-4o-mini")
        assert caught.value.context["errors"]  # the first call carries the deployments' failures

        async def async_call() -> None:
            await client.acomplete("chat", "hi")

        with pytest.raises(LLMGroupUnavailableError):
            asyncio.run(async_call())


def test_item_2_every_deployment_at_its_rpm_fails_fast_naming_the_wait() -> None:
    client = llmplex.Client(groups={"chat": {"deployments": [{"model": "mock:a", "rpm": 1}]}})
    client.complete("chat", "hi")
    with pytest.raises(LLMGroupUnavailableError) as caught:
        client.complete("chat", "hi")
    assert caught.value.retry_after is not None and 0 < caught.value.retry_after <= 60


def test_item_2_all_cooling_hands_over_to_the_fallback() -> None:
    client = llmplex.Client(
        providers={"spare": {"plugin": "mock"}},
        groups={"chat": {"deployments": [{"model": "mock:a"}], "allowed_fails": 1, "cooldown": 30}},
        fallbacks={"chat": ["spare:s"]},
        throttle={"max_attempts": 1},
    )
    client.provider_client("mock").push_error(LLMServerError("503"))
    assert client.complete("chat", "hi").provider == "spare"  # a fails: cools; the fallback answers
    assert client.complete("chat", "hi").provider == "spare"  # chat is cooling: straight to the fallback


def test_item_2_a_bad_request_is_not_moved_and_cools_nothing() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.json(400, fx.context_length_exceeded_error()))
        clock = FakeTime(draw=0.0)
        client = llmplex.Client(config(fakes, {"allowed_fails": 1}), clock=clock.clock())
        with pytest.raises(LLMBadRequestError):
            client.complete("chat", "hi")
        assert counts(fakes) == {"east": 1, "west": 0}
        assert client.complete("chat", "hi").provider == "east"


def test_item_2_a_stream_failing_before_its_first_chunk_is_replaced() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(500))
        fakes["west"].enqueue(Fault.ok(text="only once"))
        client = llmplex.Client(config(fakes), clock=FakeTime(draw=0.0).clock())
        events = list(client.stream("chat", "hi"))
        assert "".join(e.text or "" for e in events if e.type == "text") == "only once"
        assert events[-1].response is not None and events[-1].response.provider == "west"


def test_item_2_a_stream_cut_after_its_first_chunk_does_not_switch() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.stream_cut(after_events=2))
        client = llmplex.Client(config(fakes), clock=FakeTime(draw=0.0).clock())
        texts: list[str] = []

        def read() -> None:
            texts.extend(event.text or "" for event in client.stream("chat", "hi"))

        with pytest.raises(llmplex.LLMError):
            read()
        assert counts(fakes) == {"east": 1, "west": 0}  # no second deployment: no duplicated text

        async def astream() -> None:
            fakes["east"].enqueue(Fault.stream_cut(after_events=2))
            async for _ in client.astream("chat", "hi"):
                pass

        with pytest.raises(llmplex.LLMError):
            asyncio.run(astream())
        assert counts(fakes)["west"] == 0


def test_item_2_the_group_retries_under_the_call_policy_and_gives_up() -> None:
    with servers("east", "west") as fakes:
        for server in fakes.values():
            server.set_random(1.0, [Fault.server_error(503)])
        client = llmplex.Client(
            config(fakes, {"allowed_fails": 99}, throttle={"max_attempts": 3}), clock=FakeTime().clock()
        )
        with pytest.raises(LLMServerError) as caught:
            client.complete("chat", "hi")
        assert caught.value.attempts == 3 and sum(counts(fakes).values()) == 3
        assert len(caught.value.context["errors"]) == 3


def test_item_2_embed_moves_a_retryable_failure_to_another_deployment() -> None:
    client = llmplex.Client(
        providers={"backup": {"plugin": "mock"}},
        groups={"chat": {"allowed_fails": 1, "deployments": [{"model": "mock:embed"}, {"model": "backup:embed"}]}},
        clock=FakeTime(draw=0.0).clock(),
    )
    client.provider_client("mock").push_error(LLMServerError("503"))
    vectors = client.embed("chat", ["a", "b"])
    assert (vectors.provider, len(vectors.vectors), vectors.attempts) == ("backup", 2, 2)
    assert client.embed("chat", ["c"]).provider == "backup"  # mock cools after its one allowed failure

    async def aembed() -> llmplex.Embeddings:
        return await client.aembed("chat", ["d"])

    assert asyncio.run(aembed()).provider == "backup"
    client.provider_client("backup").push_error(LLMBadRequestError("400"))
    with pytest.raises(LLMBadRequestError):
        client.embed("chat", ["e"])


def test_item_2_the_group_policy_is_throttle_providers_of_the_group_name_and_a_call_throttle() -> None:
    client = llmplex.Client(
        providers={"backup": {"plugin": "mock"}},
        groups={"chat": {"deployments": [{"model": "mock:a"}, {"model": "backup:b"}]}},
        throttle={"providers": {"chat": {"max_attempts": 1}}},
        clock=FakeTime(draw=0.0).clock(),
    )
    client.provider_client("mock").push_error(LLMServerError("503"))
    with pytest.raises(LLMServerError) as caught:
        client.complete("chat", "hi")  # one attempt for the group: not moved
    assert caught.value.attempts == 1 and caught.value.context["gave_up"].startswith("max_attempts (1)")
    client.provider_client("mock").push_error(LLMServerError("503"))
    assert client.complete("chat", "hi", throttle={"max_attempts": 2}).provider == "backup"


def test_item_2_first_attempts_leave_the_hedge_reserve_and_retries_use_it() -> None:
    with servers("east", "west") as fakes:
        settings = config(fakes, {"hedge_reserve": 0.5})
        settings["groups"]["chat"]["deployments"][0].update(rpm=4, weight=100)  # east first while it has room
        client = llmplex.Client(settings, clock=FakeTime(draw=0.0).clock())
        assert [client.complete("chat", "hi").provider for _ in range(4)] == ["east", "east", "west", "west"]
        assert counts(fakes) == {"east": 2, "west": 2}  # east's last 2 of 4: its reserve, skipped by first attempts
        fakes["west"].enqueue(Fault.server_error(503))
        assert client.complete("chat", "hi").provider == "east"  # the retry of west's failure takes the reserve
        assert counts(fakes) == {"east": 3, "west": 3}
        assert client.complete("chat", "hi").provider == "west"


def test_item_2_a_first_attempt_with_nowhere_else_to_go_uses_the_reserve() -> None:
    client = llmplex.Client(groups={"chat": {"hedge_reserve": 0.5, "deployments": [{"model": "mock:a", "rpm": 2}]}})
    assert [client.complete("chat", "hi").provider for _ in range(2)] == ["mock", "mock"]
    with pytest.raises(LLMGroupUnavailableError) as caught:
        client.complete("chat", "hi")  # the whole window spent: at its rpm, as without a reserve
    assert caught.value.retry_after is not None and 0 < caught.value.retry_after <= 60


def test_item_2_the_reserve_is_a_fifth_by_default_with_hedge_and_none_without() -> None:
    def first_attempts(group: dict[str, object]) -> int:
        deployments = [{"model": "mock:a", "rpm": 10, "weight": 100}, {"model": "mock:b"}]
        client = llmplex.Client(groups={"chat": {**group, "deployments": deployments}}, clock=FakeTime(0.0).clock())
        return [client.complete("chat", "hi").model for _ in range(12)].count("a")

    assert first_attempts({}) == 10
    assert first_attempts({"hedge": "20s"}) == 8  # 2 of 10 kept for hedges and retries
    assert first_attempts({"hedge": "20s", "hedge_reserve": 0}) == 10


def test_item_2_the_reserve_is_kept_in_the_shared_windows(redis_server: RedisServer) -> None:
    with servers("east", "west") as fakes:
        settings = config(fakes, {"hedge_reserve": 0.5}, limits={"storage": redis_server.url})
        settings["groups"]["chat"]["deployments"][0].update(rpm=4, weight=100)
        first, second = (llmplex.Client(settings, clock=FakeTime(draw=0.0).clock()) for _ in range(2))
        assert [first.complete("chat", "hi").provider for _ in range(2)] == ["east", "east"]
        assert second.complete("chat", "hi").provider == "west"  # east's other 2 are the reserve, for both
        fakes["west"].enqueue(Fault.server_error(503))
        assert second.complete("chat", "hi").provider == "east"  # a retry takes the shared reserve
        assert counts(fakes) == {"east": 3, "west": 2}


def test_item_2_embed_first_attempts_leave_the_reserve_too() -> None:
    deployments = [{"model": "mock:embed", "rpm": 2, "weight": 100}, {"model": "backup:embed"}]
    client = llmplex.Client(
        providers={"backup": {"plugin": "mock"}},
        groups={"chat": {"hedge_reserve": 0.5, "deployments": deployments}},
        clock=FakeTime(draw=0.0).clock(),
    )
    assert [client.embed("chat", ["a"]).provider for _ in range(2)] == ["mock", "backup"]
    client.provider_client("backup").push_error(LLMServerError("503"))
    assert client.embed("chat", ["b"]).provider == "mock"  # the retry takes mock's reserve
