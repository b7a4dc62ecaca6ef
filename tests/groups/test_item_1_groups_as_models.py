"""Issue 33 item 1: a group's name works wherever a model string does, and a bad group fails at config load."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

import llmplex
from llmplex import LLMConfigurationError, RequestStarted
from tests.groups.helpers import Recorder, config, counts, models, servers
from tests.support.fault_server import Fault


class City(BaseModel):
    name: str


def test_item_1_client_groups_keyword_spreads_calls_and_the_answer_names_the_deployment() -> None:
    with servers("east", "west") as fakes:
        settings = config(fakes)
        groups = settings.pop("groups")
        client = llmplex.Client(settings, groups=groups)
        answers = [client.complete("chat", f"hi {i}") for i in range(12)]
        assert {(a.provider, a.model) for a in answers} == {("east", "gpt-4o-mini"), ("west", "gpt-4o-mini")}
        assert sum(counts(fakes).values()) == 12
        assert models(fakes["east"].requests) == ["gpt-4o-mini"] * fakes["east"].request_count


def test_item_1_config_file_groups_table(tmp_path: Path) -> None:
    with servers("east", "west") as fakes:
        east, west = fakes["east"].url, fakes["west"].url
        (tmp_path / "llmplex.toml").write_text(
            f"""
[providers.east]
plugin = "openai"
base_url = "{east}"
api = "chat"
api_key = "sk-test"
[providers.west]
plugin = "openai"
base_url = "{west}"
api = "chat"
api_key = "sk-test"
[groups.chat]
strategy = "weighted"
cooldown = "10s"
allowed_fails = 2
deployments = [{{ model = "east:gpt-4o-mini", weight = 3, rpm = 600, tpm = 200000 }},
               {{ model = "west:gpt-4o-mini", weight = 0 }}]
"""
        )
        client = llmplex.Client()
        assert client.config.groups["chat"].cooldown == 10.0
        answers = [client.complete("chat", "hi") for _ in range(5)]
        assert {a.provider for a in answers} == {"east"}  # weight 0: a spare, used only when east cannot answer
        assert counts(fakes) == {"east": 5, "west": 0}


def test_item_1_stream_acomplete_astream_and_events_name_each_attempt_deployment() -> None:
    with servers("east", "west") as fakes:
        recorder = Recorder()
        client = llmplex.Client(config(fakes, {"strategy": "least-busy"}), plugins=[recorder])
        events = list(client.stream("chat", "tell me"))
        assert events[-1].response is not None and events[-1].response.provider in fakes
        assert "".join(e.text or "" for e in events[:-1]) == events[-1].response.text

        async def both() -> tuple[llmplex.Response, list[llmplex.StreamEvent]]:
            answer = await client.acomplete("chat", "hi")
            streamed = [e async for e in client.astream("chat", "hi")]
            return answer, streamed

        answer, streamed = asyncio.run(both())
        assert answer.provider in fakes and streamed[-1].response is not None
        started = recorder.of(RequestStarted)
        assert len(started) == 3 and all(e.provider in fakes and e.model == "gpt-4o-mini" for e in started)


def test_item_1_tool_loop_structured_output_embed_and_batch_take_the_group() -> None:
    client = llmplex.Client(groups={"chat": {"deployments": [{"model": "mock:a"}, {"model": "mock:b"}]}})
    backend = client.provider_client("mock")  # both deployments share one scripted backend: order is kept
    backend.push('{"name": "Paris"}')
    backend.push(tool_calls=[{"name": "add", "arguments": '{"a": 2, "b": 3}'}])
    backend.push("five")
    city = client.complete("chat", "capital of France?", output=City)
    assert city.output == City(name="Paris") and city.model in ("a", "b")

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    looped = client.complete("chat", "2+3?", tools=[add])
    assert looped.text == "five"
    vectors = client.embed("chat", ["a", "b"])
    assert len(vectors.vectors) == 2
    results = llmplex.batch([{"model": "chat", "prompt": f"p{i}"} for i in range(6)], client=client)
    assert all(isinstance(r, llmplex.Response) and r.model in ("a", "b") for r in results)
    assert {call["model"] for call in backend.calls} == {"a", "b"}


def test_item_1_aliases_and_fallbacks_name_groups() -> None:
    client = llmplex.Client(
        providers={"backup": {"plugin": "mock"}, "down": {"plugin": "mock"}},
        groups={"chat": {"deployments": [{"model": "backup:b"}]}},
        aliases={"fast": "chat"},
        fallbacks={"down:x": ["fast"]},
        throttle={"max_attempts": 1},
    )
    client.provider_client("down").push_error(llmplex.LLMServerError("503"))
    answer = client.complete("down:x", "hi")
    assert (answer.provider, answer.model, answer.attempts) == ("backup", "b", 2)
    assert client.complete("fast", "hi").provider == "backup"


@pytest.mark.parametrize(
    ("groups", "extra", "says"),
    [
        ({"chat": {"deployments": [{"model": "nope:gpt"}]}}, {}, "unknown provider prefix 'nope'"),
        ({"chat": {"deployments": [{"model": "mock:a", "weight": 0}]}}, {}, "no deployment has a positive weight"),
        ({"chat": {"deployments": [{"model": "chat"}]}}, {}, "contains itself: chat -> chat"),
        (
            {"chat": {"deployments": [{"model": "inner"}]}, "inner": {"deployments": [{"model": "loop"}]}},
            {"aliases": {"loop": "chat"}},
            "contains itself: chat -> inner -> chat",
        ),
        ({"chat": {"strategy": "fastest", "deployments": [{"model": "mock:a"}]}}, {}, "'weighted', 'least-busy'"),
        ({"chat": {"deployments": []}}, {}, "groups.chat.deployments"),
        ({"a:b": {"deployments": [{"model": "mock:a"}]}}, {}, "without ':'"),
        ({"fast": {"deployments": [{"model": "mock:a"}]}}, {"aliases": {"fast": "mock:b"}}, "also an alias"),
        ({"chat": {"deployments": [{"model": "mock:a"}, {"model": "mock:a"}]}}, {}, "listed twice"),
        ({"chat": {"hedge": "soon", "deployments": [{"model": "mock:a"}]}}, {}, "duration"),
        ({"chat": {"hedge": 0, "deployments": [{"model": "mock:a"}]}}, {}, "positive duration"),
        ({"chat": {"hedge_reserve": 1, "deployments": [{"model": "mock:a"}]}}, {}, "groups.chat.hedge_reserve"),
        ({"chat": {"hedge_reserve": -0.5, "deployments": [{"model": "mock:a"}]}}, {}, "groups.chat.hedge_reserve"),
        ({"chat": {"hedge_reserve": "half", "deployments": [{"model": "mock:a"}]}}, {}, "groups.chat.hedge_reserve"),
        ({"chat": {"deployments": [{"model": "bare"}]}}, {}, "no provider prefix"),
    ],
)
def test_item_1_a_bad_group_is_a_configuration_error_naming_it_at_load(
    groups: dict[str, object], extra: dict[str, object], says: str
) -> None:
    with pytest.raises(LLMConfigurationError) as caught:
        llmplex.Client(groups=groups, **extra)
    name = next(iter(groups))
    assert says in str(caught.value) and name in str(caught.value)


def test_item_1_a_nested_group_stands_for_its_deployments() -> None:
    client = llmplex.Client(
        providers={"backup": {"plugin": "mock"}},
        groups={
            "inner": {"deployments": [{"model": "backup:b"}]},
            "chat": {"deployments": [{"model": "inner"}, {"model": "mock:a", "weight": 0}]},
        },
    )
    assert {client.complete("chat", "hi").provider for _ in range(4)} == {"backup"}
    assert [d.spec for d in client.router.group("chat").deployments] == ["backup:b", "mock:a"]


def test_item_1_both_deployments_failing_once_still_answers_within_the_call() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503))
        fakes["west"].enqueue(Fault.server_error(503))
        client = llmplex.Client(config(fakes, throttle={"base_delay": 0}))
        answer = client.complete("chat", "hi")
        assert answer.provider in fakes and answer.attempts == 3
        assert counts(fakes)["east"] >= 1 and counts(fakes)["west"] >= 1
