"""Issue 31 item 2: ``/metrics`` label values come only from the configured set, whatever clients send.

10,000 requests with random model names and random header values go through the gateway's ASGI
application in-process; the series stay bounded and every label value is a configured model
string, a provider instance, a key name, or ``other`` / ``none``.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
from collections import defaultdict
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

import llmplex
from llmplex.gateway.app import create_app
from llmplex.gateway.keys.access import MasterKeyAuthenticator
from llmplex.gateway.ops.metrics import MetricLabels, Metrics
from llmplex.gateway.records import RequestRecord
from tests.gateway.harness import MASTER_KEY, gateway_config

REQUESTS = 10_000
CONFIGURED = {"mock:echo", "mock:embed", "fast", "gpt-4o-mini", "openai:gpt-4o-mini", "text-embedding-3-small"}
_ALPHABET = string.ascii_letters + string.digits + string.punctuation + " é∑\u202e"


def _text(rng: random.Random, ascii_only: bool = False) -> str:
    alphabet = string.ascii_letters + string.digits + string.punctuation + " " if ascii_only else _ALPHABET
    return "".join(rng.choices(alphabet, k=rng.randint(1, 40))).strip() or "x"


def _request(rng: random.Random) -> tuple[str, dict[str, Any], dict[str, str]]:
    """A random request: endpoint, body (a random model name, sometimes a configured one), random headers."""
    kind = rng.random()  # a quarter reach the mock provider (the costly part), the rest are refused before any
    if kind < 0.2:
        model = f"mock:{_text(rng)}"
    elif kind < 0.25:
        model = rng.choice(["fast", "mock:echo"])
    else:
        model = rng.choice([_text(rng), f"{_text(rng)}:{_text(rng)}"])
    headers = {
        "user-agent": _text(rng, ascii_only=True),
        "x-request-id": _text(rng, ascii_only=True),
        "anthropic-version": _text(rng, ascii_only=True),
        "openai-organization": _text(rng, ascii_only=True),
        "x-forwarded-for": _text(rng, ascii_only=True),
        "x-llmplex-key": _text(rng, ascii_only=True),
    }
    if rng.random() < 0.1:
        headers["x-api-key"] = "sk-" + _text(rng, ascii_only=True).replace(" ", "")  # a wrong key: 401
    else:
        headers["authorization"] = f"Bearer {MASTER_KEY}"
    messages = [{"role": "user", "content": _text(rng)}]
    path, body = rng.choice(
        [
            ("/v1/chat/completions", {"model": model, "messages": messages}),
            ("/v1/messages", {"model": model, "max_tokens": 5, "messages": messages}),
            ("/v1/responses", {"model": model, "input": _text(rng)}),
            ("/v1/embeddings", {"model": model, "input": _text(rng)}),
        ]
    )
    return path, body, headers


async def _call(app: Any, path: str, body: dict[str, Any] | None, headers: dict[str, str]) -> tuple[int, bytes]:
    """One request straight into the ASGI application (no HTTP client in between: 10,000 of them stay quick)."""
    data = json.dumps(body).encode() if body is not None else b""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "scheme": "http", "root_path": "",
        "method": "POST" if body is not None else "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("203.0.113.7", 4711), "server": ("gateway", 80),
    }  # fmt: skip
    pending = [{"type": "http.request", "body": data, "more_body": False}]
    status: list[int] = []
    answer: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await asyncio.Event().wait()  # the client stays: never "http.disconnect"
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message["type"] == "http.response.body":
            answer.append(message.get("body", b""))

    await app(scope, receive, send)
    return status[0], b"".join(answer)


def _label_values(text: str) -> tuple[int, dict[str, set[str]]]:
    """The number of series (samples, histogram buckets included) and every value of every label."""
    count = 0
    values: dict[str, set[str]] = defaultdict(set)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            count += 1
            for name, value in sample.labels.items():
                values[name].add(value)
    return count, values


def test_item_2_ten_thousand_random_model_names_and_headers_keep_the_series_bounded() -> None:
    config = gateway_config(
        aliases={"fast": "mock:echo", "gpt-4o-mini": "openai:gpt-4o-mini"},
        gateway={"auth_failures": 1_000_000},  # the wrong keys among them are counted, not throttled, here
    )
    client = llmplex.Client(config)
    app = create_app(client, MasterKeyAuthenticator(MASTER_KEY))
    rng = random.Random(31)
    statuses: dict[int, int] = defaultdict(int)

    async def drive() -> tuple[int, str]:
        after_first_thousand = 0
        for n in range(REQUESTS):
            path, body, headers = _request(rng)
            if n % 50 == 0:  # the provider itself reports a made-up model name now and then
                client.provider_client("mock").push("hi", model=_text(rng))
            status, _ = await _call(app, path, body, {**headers, "content-type": "application/json"})
            statuses[status] += 1
            if n == 999:
                after_first_thousand = _label_values((await _call(app, "/metrics", None, {}))[1].decode())[0]
        return after_first_thousand, (await _call(app, "/metrics", None, {}))[1].decode()

    early, text = asyncio.run(drive())
    series, values = _label_values(text)
    print(f"series after 1,000 random requests: {early}; after {REQUESTS:,}: {series}; answers: {dict(statuses)}")
    assert statuses[200] > 1500 and statuses[400] > 4000 and statuses[401] > 500  # served, refused, unknown key
    assert values["model"] <= CONFIGURED | {"other", "none"}, values["model"] - CONFIGURED
    assert values["provider"] <= {"mock", "openai", "other", "none"}
    assert values["key"] <= {"master", "anonymous"}
    assert series <= 600 and series <= 1.5 * early  # bounded: after the first thousand, only rarer combinations


def test_item_2_label_values_outside_the_configuration_are_other() -> None:
    groups = {"pool": {"deployments": [{"model": "mock:one"}, {"model": "mock:two"}]}}
    client = llmplex.Client(gateway_config(fallbacks={"mock:echo": ["mock:backup"]}, groups=groups))
    labels = MetricLabels.of(client)
    metrics = Metrics(labels)

    def record(asked: str, provider: str, model: str, error: str | None = None, status: int = 200) -> RequestRecord:
        return RequestRecord("r", "chat.completions", "k", asked, provider, model, False, status, error, None, None,
                             None, 0.01, 0.0)  # fmt: skip

    assert labels.model(record("fast", "mock", "echo")) == "mock:echo"  # an alias answered by its model
    assert labels.model(record("mock:echo", "mock", "echo-2026-01-01")) == "mock:echo"  # a dated answer: the asked
    assert labels.model(record("mock:backup", "mock", "backup")) == "mock:backup"  # a fallback the config names
    assert labels.model(record("pool", "mock", "two")) == "mock:two"  # a group, answered by one of its deployments
    assert labels.model(record("pool", "mock", "two-dated")) == "pool"
    assert labels.model(record("mock:x\n}", "mock", "x\n}")) == "other"
    assert labels.model(record("nope:x", "", "")) == "none"
    assert labels.provider(record("m", "mock", "m")) == "mock"
    assert labels.provider(record("m", "made-up-instance", "m")) == "other"
    for n in range(500):  # error types and statuses past the bound
        metrics.observe(record("mock:echo", "mock", "echo", error=f"Err{n}", status=1000 + n), None)
    _, values = _label_values(metrics.exposition()[0].decode())
    assert len(values["type"]) == 65 and "other" in values["type"]
    assert values["status"] == {"other"}
