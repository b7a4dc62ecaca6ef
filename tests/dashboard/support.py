"""Helpers of the dashboard tests: call logs seeded with known figures, 100,000 calls in bulk, a running dashboard.

``seed_known`` writes a small log whose totals the tests know, plus real calls
made through an ``llmplex.Client`` on the mock provider with secrets in reach
(a provider key, a key in the prompt, header values, a password option) and a
tool call with its result. ``seed_bulk`` writes many rows in one transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import uvicorn

import llmplex
from llmplex.store import calls, open_database

__all__ = [
    "HOSTILE_PROMPT",
    "KNOWN",
    "SECRETS",
    "Server",
    "call_row",
    "insert",
    "running",
    "seed_bulk",
    "seed_known",
]

PROVIDER_KEY = "mockkey-dashboard-0123456789abcdefghij"
HEADER_VALUE = "plain-header-value-5521-dashboard"
SECRETS = (
    PROVIDER_KEY,
    "sk-proj-dashboardsecret9876543210zz",
    HEADER_VALUE,
    "sk-inline-dashboard-0123456789abcdef",
    "hunter2-dashboard-password",
)
"""Every secret the seeded calls had in reach; none may appear on any page or in any response."""

HOSTILE_PROMPT = '<img src=x onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=1</script>'
"""A logged prompt that must show as text, never run."""

KNOWN = {
    "openai:gpt-4o": Decimal("3.75"),  # 3 calls x 1.25 on 2026-11-01
    "anthropic:claude-sonnet-4-5": Decimal("1.00"),  # 2 calls x 0.50 on 2026-11-02, key team-a
    "gemini:gemini-2.5-flash": Decimal("0.25"),  # 1 call on 2026-11-03 (+1 failed, +1 unpriced)
}
"""Cost per model of the rows ``seed_known`` writes in bulk (the mock's calls have no price)."""


def call_row(index: int, when: datetime, **fields: Any) -> dict[str, Any]:
    """One made-up call as the writer writes it; ``fields`` override any column."""
    prompt = f"question {index} about pelicans and herons number {index % 977}"
    row: dict[str, Any] = {
        "created_at": when,
        "request_id": f"req-{index}",
        "conversation_id": f"conv-{index}",
        "model_asked": "openai:gpt-4o-mini",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "status": "ok",
        "error_type": None,
        "finish_reason": "stop",
        "prompt": [{"role": "user", "content": prompt}],
        "answer": {"role": "assistant", "content": f"answer {index}"},
        "prompt_text": prompt,
        "answer_text": f"answer {index}",
        "options": {"temperature": 0.2},
        "input_tokens": 100,
        "output_tokens": 20,
        "total_tokens": 120,
        "cost_usd": Decimal("0.0001"),
        "cost_note": None,
        "latency": 0.4,
        "attempts": 1,
        "cached": False,
        "key_name": None,
    }
    row.update(fields)
    return row


def insert(url: str, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` into the log at ``url`` in one transaction (made and migrated when missing)."""
    engine = open_database(url, writer=True)
    try:
        with engine.begin() as connection:
            for start in range(0, len(rows), 10_000):
                connection.execute(calls.insert(), rows[start : start + 10_000])
    finally:
        engine.dispose()


def seed_bulk(url: str, count: int, start: datetime = datetime(2026, 8, 1), unit: str = "0.0001") -> None:
    """``count`` calls spread over 90 days, five models on three providers, one in 50 failed, every
    tenth made with a gateway key, each costing 1 to 7 ``unit`` dollars: one transaction of inserts."""
    models = [
        ("openai", "gpt-4o-mini"),
        ("openai", "gpt-4o"),
        ("anthropic", "claude-sonnet-4-5"),
        ("gemini", "gemini-2.5-flash"),
        ("anthropic", "claude-haiku-4-5"),
    ]
    step = timedelta(days=90) / count
    rows = []
    for i in range(count):
        provider, model = models[i % len(models)]
        failed = i % 50 == 0
        rows.append(
            call_row(
                i,
                start + step * i,
                provider=provider,
                model=model,
                model_asked=f"{provider}:{model}",
                status="error" if failed else "ok",
                error_type="LLMServerError" if failed else None,
                answer=None if failed else {"role": "assistant", "content": f"answer {i}"},
                answer_text=None if failed else f"answer {i}",
                cost_usd=None if failed else Decimal(1 + i % 7) * Decimal(unit),
                key_name=f"team-{i % 3}" if i % 10 == 0 else None,
            )
        )
    insert(url, rows)


def seed_known(url: str) -> None:
    """The log the browser tests read: known costs per model and day, one failed and one unpriced call,
    a hostile prompt, and real calls through a Client (a tool call and its result, secrets in reach)."""
    day = datetime(2026, 11, 1, 9, 30)
    rows = [
        *(call_row(i, day + timedelta(minutes=i), cost_usd=Decimal("1.25"), model="gpt-4o") for i in range(3)),
        *(
            call_row(
                10 + i,
                day + timedelta(days=1, minutes=i),
                provider="anthropic",
                model="claude-sonnet-4-5",
                model_asked="anthropic:claude-sonnet-4-5",
                cost_usd=Decimal("0.50"),
                key_name="team-a",
            )
            for i in range(2)
        ),
        call_row(20, day + timedelta(days=2), provider="gemini", model="gemini-2.5-flash", cost_usd=Decimal("0.25")),
        call_row(
            21,
            day + timedelta(days=2, minutes=1),
            provider="gemini",
            model="gemini-2.5-flash",
            status="error",
            error_type="LLMRateLimitError",
            answer=None,
            answer_text=None,
            cost_usd=None,
        ),
        call_row(
            22,
            day + timedelta(days=2, minutes=2),
            provider="gemini",
            model="gemini-2.5-flash",
            cost_usd=None,
            cost_note="no price known for gemini-2.5-flash",
            prompt=[{"role": "user", "content": HOSTILE_PROMPT}],
            prompt_text=HOSTILE_PROMPT,
        ),
    ]
    for row in rows:  # the model as asked follows the model
        row["model_asked"] = f"{row['provider']}:{row['model']}"
    insert(url, rows)
    _real_calls(url)


def _real_calls(url: str) -> None:
    """Calls made through a Client on the mock: a tool round trip, and a call with secrets in its options."""
    client = llmplex.Client(log=url, providers={"mock": {"api_key": PROVIDER_KEY}})
    backend = client.provider_client("mock")
    backend.push(tool_calls=[{"id": "call_weather_1", "name": "weather", "arguments": '{"city": "Lisbon"}'}])
    backend.push("Lisbon is sunny, 21 degrees.")

    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny, 21 degrees in {city}"

    assert client.complete("mock:echo", "What is the weather in Lisbon?", tools=[weather]).text
    client.complete(
        "mock:echo",
        f"remember my key {PROVIDER_KEY} and sk-proj-dashboardsecret9876543210zz",
        provider_options={
            "extra_headers": {"Authorization": "Bearer sk-proj-dashboardsecret9876543210zz", "X-Trace": HEADER_VALUE},
            "api_key": "sk-inline-dashboard-0123456789abcdef",
            "nested": {"password": "hunter2-dashboard-password"},
        },
    )
    assert client.call_log is not None and client.call_log.flush(30)
    client.close()


class Server:
    """An ASGI app on uvicorn at 127.0.0.1 (any free port) in a thread of the test process."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="auto")
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def start(self) -> Server:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the dashboard server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(10)


@contextmanager
def running(app: Any) -> Iterator[Server]:
    """``app`` served on 127.0.0.1 for the ``with`` block."""
    server = Server(app).start()
    try:
        yield server
    finally:
        server.stop()
