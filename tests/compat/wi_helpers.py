"""Shared pieces of the weakincentives compatibility tests: prompts, adapters on the fault server, a fake clock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import llmplex
from llmplex.compat.weakincentives import (
    MarkdownSection,
    OpenAIAdapter,
    OpenAIClientConfig,
    Prompt,
    PromptTemplate,
    new_throttle_policy,
)
from tests.support.fault_server import FaultServer

KEY = "sk-compat-test-0123456789abcdef"
FAST = new_throttle_policy(base_delay=timedelta(milliseconds=1), max_delay=timedelta(milliseconds=2))


@dataclass
class GreetingParams:
    user: str


@dataclass
class StructuredAnswer:
    answer: str


def greeting_template() -> PromptTemplate[Any]:
    return PromptTemplate(
        ns="tests/compat",
        key="greeting",
        name="greeting",
        sections=(MarkdownSection[GreetingParams](title="Greeting", key="greeting", template="Say hello to ${user}."),),
    )


def greeting(user: str = "Sam") -> Prompt[Any]:
    return Prompt(greeting_template()).bind(GreetingParams(user=user))


def structured(answer_type: Any = StructuredAnswer) -> Prompt[Any]:
    template = PromptTemplate[answer_type](
        ns="tests/compat",
        key="structured",
        name="structured",
        sections=(MarkdownSection(title="Task", key="task", template="Answer the question."),),
    )
    return Prompt(template)


def openai_adapter(server: FaultServer, **options: Any) -> OpenAIAdapter:
    options.setdefault("throttle_policy", FAST)
    config = options.pop("client_config", OpenAIClientConfig(api_key=KEY, base_url=server.url))
    return OpenAIAdapter(model="gpt-test", client_config=config, **options)


class SleepLog:
    """A clock whose sleeps are recorded and skipped."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def clock(self) -> llmplex.Clock:
        async def asleep(seconds: float) -> None:
            self.sleeps.append(seconds)

        return llmplex.Clock(sleep=self.sleeps.append, asleep=asleep)


def client_on(server: FaultServer, clock: llmplex.Clock | None = None) -> llmplex.Client:
    """An llmplex Client whose ``openai`` provider is the fault server (Responses API)."""
    return llmplex.Client(
        providers={"openai": {"api": "responses", "base_url": server.url, "api_key": KEY}}, clock=clock
    )


def sent(server: FaultServer, index: int = -1) -> dict[str, Any]:
    body = server.requests[index].body
    assert isinstance(body, dict)
    return body


def answer_json(**fields: Any) -> str:
    return json.dumps(fields)
