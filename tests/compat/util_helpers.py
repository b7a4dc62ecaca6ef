"""Shared pieces of the util_llm compatibility tests: a PhaseConfig, replies with response ids, a fake adapter."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from llmplex.compat.util_llm import AdapterResponse, OpenAIAdapter, ResponseUsage
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

KEY = "sk-util-llm-test-0123456789"


class IntentionResponse(BaseModel):
    intention: str
    target: str | None = None
    reasoning: str


@dataclass
class PhaseConfig:
    """The application's phase settings, as util_llm's OpenAIAdapter read them."""

    model: str = "gpt-test"
    max_completion: int = 400
    timeout: float = 10.0
    max_retries: int = 2
    response_chain_depth: int = 0


def intention(response_id: str, what: str = "idle", usage: fx.TokenUsage | None = None) -> Fault:
    """A Responses API answer with this id, holding an IntentionResponse."""
    text = json.dumps({"intention": what, "target": None, "reasoning": "because"})
    return Fault.json(200, {**fx.response_text(text, usage or fx.TokenUsage()), "id": response_id})


def characters(*ids: str) -> list[dict[str, Any]]:
    return [{"identity": {"id": i, "name": i.title()}, "state": {"hp": 10}} for i in ids]


def posts(server: FaultServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.method == "POST" and isinstance(r.body, dict)]


def deleted(server: FaultServer) -> list[str]:
    return [r.path.rsplit("/", 1)[1] for r in server.requests if r.method == "DELETE"]


@pytest.fixture
def env(fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> FaultServer:
    """The fault server as the endpoint ``AsyncOpenAI()`` would find in the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fault_server.url)
    return fault_server


def adapter(**config: Any) -> OpenAIAdapter:
    return OpenAIAdapter(PhaseConfig(**config))


class FakeAdapter:
    """A util_llm-style adapter written by an application's tests: scripted answers, calls recorded."""

    def __init__(self, fail_on: frozenset[str] = frozenset(), pause: float = 0.0) -> None:
        self.fail_on = fail_on
        self.pause = pause
        self.calls: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def execute(
        self, instructions: str, input_data: str, schema: type[Any], previous_response_id: str | None = None
    ) -> AdapterResponse[Any]:
        self.calls.append({"input": input_data, "previous_response_id": previous_response_id})
        number = len(self.calls)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.pause)
        finally:
            self.in_flight -= 1
        if input_data in self.fail_on:
            raise RuntimeError(f"adapter bug on {input_data}")
        parsed = schema(intention=input_data, reasoning="fake")
        return AdapterResponse(
            response_id=f"fake_{number}", parsed=parsed, usage=ResponseUsage(input_tokens=10, output_tokens=2)
        )

    async def delete_response(self, response_id: str) -> None:
        self.deleted.append(response_id)
