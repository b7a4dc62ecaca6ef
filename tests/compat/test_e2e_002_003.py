"""End to end, seeds 002/003: a weakincentives v0.18.0 program, imports swapped, against a local fake OpenAI server.

The program below is written the way weakincentives' users write it (original
imports); the test rewrites only its ``from weakincentives... import`` lines to
``from llmplex.compat.weakincentives import`` and runs it in a subprocess whose
environment points ``OPENAI_BASE_URL`` at the fault-injecting server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compat.e2e import run_program, swap_imports
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

KEY = "sk-e2e-weakincentives-0123456789"

PROGRAM = """
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from weakincentives.adapters import PromptEvaluationError, ThrottleError
from weakincentives.adapters.openai import OpenAIAdapter, OpenAIClientConfig, OpenAIModelConfig
from weakincentives.adapters.shared import new_throttle_policy
from weakincentives.budget import Budget, BudgetTracker
from weakincentives.deadlines import Deadline
from weakincentives.prompt import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from weakincentives.runtime import Session
from weakincentives.runtime.events import PromptExecuted, PromptRendered, ToolInvoked


@dataclass
class ReviewParams:
    code: str


@dataclass
class LookupParams:
    topic: str


@dataclass
class LookupResult:
    guideline: str


@dataclass
class Review:
    verdict: str
    issues: list[str]


def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    return ToolResult.ok(LookupResult(guideline=f"{params.topic}: prefer pure functions"), message="found")


template = PromptTemplate[Review](
    ns="examples/review",
    key="code-review",
    name="code_review",
    sections=(
        MarkdownSection[ReviewParams](
            title="Review",
            key="review",
            template="Review this code and report issues:\\n\\n${code}",
            tools=[
                Tool[LookupParams, LookupResult](
                    name="lookup_guideline", description="Find a guideline.", handler=lookup
                )
            ],
        ),
    ),
)

session = Session()
log = []
session.dispatcher.subscribe(PromptRendered, lambda e: log.append(("rendered", e.prompt_key)))
session.dispatcher.subscribe(ToolInvoked, lambda e: log.append(("tool", e.name)))
session.dispatcher.subscribe(PromptExecuted, lambda e: log.append(("executed", e.usage.total_tokens)))

adapter = OpenAIAdapter(
    model="gpt-4o",
    client_config=OpenAIClientConfig(timeout=30.0),
    model_config=OpenAIModelConfig(temperature=0.2, max_tokens=512),
)
budget = Budget(deadline=Deadline(expires_at=datetime.now(UTC) + timedelta(minutes=1)), max_total_tokens=10_000)
tracker = BudgetTracker(budget)
prompt = Prompt(template).bind(ReviewParams(code="def f(x): return g(x)"))
with prompt.resources:
    response = adapter.evaluate(prompt, session=session, budget=budget, budget_tracker=tracker)

outcome = {"output": [response.output.verdict, response.output.issues], "text": response.text, "log": log}

try:
    adapter.evaluate(Prompt(template).bind(ReviewParams(code="x")), session=Session())
except ThrottleError as error:
    outcome["throttle"] = [error.kind, error.attempts, error.retry_safe, error.retry_after.total_seconds()]
except PromptEvaluationError as error:
    outcome["throttle"] = ["unexpected", error.phase]
outcome["consumed"] = tracker.consumed.total_tokens
print(json.dumps(outcome))
"""


def test_a_weakincentives_program_runs_on_llmplex_by_swapping_imports(
    fault_server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeds 002/003 end to end: OpenAI adapter, template with params, tool, structured output, events, budget,
    deadline, and a throttle error after five 429s — the program changed only in its imports."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fault_server.url)
    review = json.dumps({"verdict": "needs work", "issues": ["g is undefined"]})
    fault_server.enqueue(
        Fault.rate_limit(retry_after_ms=5),
        Fault.json(200, fx.response_function_call(fx.FunctionCall("lookup_guideline", '{"topic": "purity"}'))),
        Fault.ok(review, usage=fx.TokenUsage(input_tokens=200, output_tokens=20)),
        *[Fault.rate_limit(retry_after=0.01)] * 5,
    )
    program = swap_imports(PROGRAM, r"weakincentives(\.\w+)*", "llmplex.compat.weakincentives")
    outcome = run_program(program, tmp_path)
    assert outcome["output"] == ["needs work", ["g is undefined"]] and outcome["text"] is None
    evaluation_tokens = fx.TokenUsage().total_tokens + 220  # the tool round's answer and the final one
    assert outcome["log"] == [
        ["rendered", "code-review"],
        ["tool", "lookup_guideline"],
        ["executed", evaluation_tokens],
    ]
    assert outcome["throttle"] == ["rate_limit", 5, False, 0.01]
    assert outcome["consumed"] == evaluation_tokens
    posts = [r for r in fault_server.requests if r.method == "POST"]
    assert [r.path for r in posts] == ["/v1/responses"] * 8
    first = posts[0].body
    assert first["model"] == "gpt-4o" and first["temperature"] == 0.2 and first["max_output_tokens"] == 512
    assert first["input"][0]["content"].startswith("## 1. Review (review)\n\nReview this code")
    assert first["text"]["format"]["name"] == "Review"
    outputs = [item for item in posts[2].body["input"] if item.get("type") == "function_call_output"]
    assert outputs[0]["output"] == 'found\n\n{"guideline":"purity: prefer pure functions"}'
