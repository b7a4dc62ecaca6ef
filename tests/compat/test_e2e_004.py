"""End to end, seed 004: a util_llm simulation tick, imports swapped, against a local fake OpenAI server.

The program is the seed's own usage examples (Phase 1 intentions with fallback,
Phase 2a resolution with chain depth 2, a single Phase 4 request) around state
files, with util_llm's imports; the test rewrites only the ``from src.utils...
import`` lines to ``from llmplex.compat.util_llm import`` and runs it in a
subprocess whose ``OPENAI_BASE_URL`` is the fault-injecting server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compat.e2e import run_program, swap_imports
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

KEY = "sk-e2e-util-llm-0123456789"

PROGRAM = """
import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from src.utils.llm import LLMClient, LLMRequest
from src.utils.llm_adapters.openai import OpenAIAdapter
from src.utils.llm_errors import LLMError

logger = logging.getLogger("simulation")


@dataclass
class PhaseConfig:
    model: str
    max_completion: int
    timeout: float
    max_retries: int
    response_chain_depth: int


@dataclass
class Config:
    phase1: PhaseConfig = field(default_factory=lambda: PhaseConfig("gpt-5-mini", 1024, 30.0, 2, 0))
    phase2a: PhaseConfig = field(default_factory=lambda: PhaseConfig("gpt-5-mini", 2048, 30.0, 2, 2))
    phase4: PhaseConfig = field(default_factory=lambda: PhaseConfig("gpt-5-nano", 512, 30.0, 0, 0))


class IntentionResponse(BaseModel):
    intention: str
    target: str | None = None
    reasoning: str


class MasterResponse(BaseModel):
    outcomes: list[dict]
    location_update: dict | None = None


class SummaryResponse(BaseModel):
    new_summary: str


def load(directory):
    return [json.loads(p.read_text()) for p in sorted(Path(directory).glob("*.json"))]


def save(directory, entities):
    for entity in entities:
        Path(directory, entity["identity"]["id"] + ".json").write_text(json.dumps(entity))


async def process_intentions(characters, config):
    adapter = OpenAIAdapter(config.phase1)
    client = LLMClient(adapter=adapter, entities=characters, default_depth=config.phase1.response_chain_depth)
    requests = [
        LLMRequest(
            instructions="Decide what you do next.",
            input_data=json.dumps(char["state"]),
            schema=IntentionResponse,
            entity_key=f"intention:{char['identity']['id']}",
        )
        for char in characters
    ]
    results = await client.create_batch(requests)
    intentions = []
    for char, result in zip(characters, results):
        if isinstance(result, LLMError):
            logger.warning(f"Phase 1 failed for {char['identity']['id']}: {result}")
            intentions.append(IntentionResponse(intention="idle", target=None, reasoning="LLM error, using fallback"))
        else:
            intentions.append(result)
    return intentions


async def process_resolutions(locations, intentions, config):
    adapter = OpenAIAdapter(config.phase2a)
    client = LLMClient(adapter=adapter, entities=locations, default_depth=config.phase2a.response_chain_depth)
    requests = [
        LLMRequest(
            instructions="Resolve the intentions at this location.",
            input_data=json.dumps([i.model_dump() for i in intentions]),
            schema=MasterResponse,
            entity_key=f"resolution:{loc['identity']['id']}",
        )
        for loc in locations
    ]
    results = await client.create_batch(requests)
    return [r if not isinstance(r, LLMError) else MasterResponse(outcomes=[]) for r in results]


async def summarize_memory(character, config):
    client = LLMClient(adapter=OpenAIAdapter(config.phase4), entities=[character], default_depth=0)
    result = await client.create_response(
        instructions="Summarize.",
        input_data="Summary: old\\n\\nEvicted: cell",
        schema=SummaryResponse,
        entity_key=f"memory:{character['identity']['id']}",
    )
    return result.new_summary


async def tick(config):
    characters, locations = load("characters"), load("locations")
    intentions = await process_intentions(characters, config)
    resolutions = []
    for _ in range(3):
        resolutions = await process_resolutions(locations, intentions, config)
    summary = await summarize_memory(characters[0], config)
    save("characters", characters)
    save("locations", locations)
    return {
        "intentions": [i.intention for i in intentions],
        "outcomes": [r.outcomes for r in resolutions],
        "summary": summary,
    }


print(json.dumps(asyncio.run(tick(Config()))))
"""


def reply(response_id: str, payload: dict[str, object], tokens: tuple[int, int] = (100, 10)) -> Fault:
    usage = fx.TokenUsage(input_tokens=tokens[0], output_tokens=tokens[1])
    return Fault.json(200, {**fx.response_text(json.dumps(payload), usage), "id": response_id})


def test_a_util_llm_tick_runs_on_llmplex_by_swapping_imports(
    fault_server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 004 end to end: § Usage Examples (Phase 1 with fallback, Phase 2a with depth 2, single request),
    § Chain Storage in Entities (state files under _openai), eviction and deletion, usage totals."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fault_server.url)
    (tmp_path / "characters").mkdir()
    (tmp_path / "locations").mkdir()
    bob = {"identity": {"id": "bob"}, "state": {"hp": 3}, "_openai": {"memory_chain": ["resp_legacy"]}}
    (tmp_path / "characters" / "bob.json").write_text(json.dumps(bob))
    (tmp_path / "locations" / "tavern.json").write_text(json.dumps({"identity": {"id": "tavern"}, "state": {}}))
    fault_server.enqueue(
        *[Fault.rate_limit(retry_after_ms=5)] * 3,  # phase 1: three attempts (max_retries=2), then the fallback
        *[reply(f"resp_r{n}", {"outcomes": [{"turn": n}]}) for n in range(3)],
        reply("resp_m", {"new_summary": "Bob rested."}),
    )
    program = swap_imports(PROGRAM, r"src\.utils\.[\w.]+", "llmplex.compat.util_llm")
    outcome = run_program(program, tmp_path)
    assert outcome == {"intentions": ["idle"], "outcomes": [[{"turn": 2}]], "summary": "Bob rested."}
    tavern = json.loads((tmp_path / "locations" / "tavern.json").read_text())
    assert tavern["_openai"]["resolution_chain"] == ["resp_r1", "resp_r2"]
    assert (
        tavern["_openai"]["usage"].items()
        >= {"total_input_tokens": 300, "total_output_tokens": 30, "total_requests": 3}.items()
    )  # util_llm\'s later totals sit beside them
    saved_bob = json.loads((tmp_path / "characters" / "bob.json").read_text())
    assert saved_bob["_openai"]["memory_chain"] == ["resp_legacy"]
    assert saved_bob["_openai"]["usage"]["total_requests"] == 1
    posts = [r.body for r in fault_server.requests if r.method == "POST"]
    assert [p.get("previous_response_id") for p in posts] == [
        None,
        None,
        None,
        None,
        "resp_r0",
        "resp_r1",
        "resp_legacy",
    ]
    assert [p["max_output_tokens"] for p in posts] == [1024] * 3 + [2048] * 3 + [512]
    assert all(p["instructions"] for p in posts)
    assert [r.path for r in fault_server.requests if r.method == "DELETE"] == ["/v1/responses/resp_r0"]
