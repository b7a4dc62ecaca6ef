"""Issue 16 item 2: ``llmplex complete --usage`` and the batch summary print tokens and cost (child processes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import genai_prices
import pytest

from tests.contract import fixtures_openai as fx
from tests.support.cli import run_llmplex
from tests.support.fault_server import Fault, FaultServer

USAGE = fx.TokenUsage(1200, 340, 1024, 0)
ENV = {"OPENAI_API_KEY": "sk-test-4f9a8b7c6d5e4f3a2b1c"}


def price(answers: int) -> str:
    one = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1200, cache_read_tokens=1024, output_tokens=340),
        "gpt-4o-mini",
        provider_id="openai",
    ).total_price
    return f"${one * answers:f}"


@pytest.fixture
def priced_fake(tmp_path: Path) -> Iterator[FaultServer]:
    """A local OpenAI-compatible server answering gpt-4o-mini with these token counts, configured as ``openai``."""
    with FaultServer(Fault.ok("Hi there", usage=USAGE)) as server:
        (tmp_path / "llmplex.toml").write_text(
            f'[providers.openai]\nbase_url = "{server.url}"\napi = "chat"\n', encoding="utf-8"
        )
        yield server


def test_item_2_complete_usage_prints_tokens_and_cost(tmp_path: Path, priced_fake: FaultServer) -> None:
    done = run_llmplex("complete", "-m", "openai:gpt-4o-mini", "--usage", "hi", cwd=tmp_path, env=ENV)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hi there"
    assert f"tokens: 1200 input (1024 cached), 340 output, 1540 total; cost: {price(1)}" in done.stderr
    assert priced_fake.request_count == 1


def test_item_2_complete_json_usage_also_prints_the_cost(tmp_path: Path, priced_fake: FaultServer) -> None:
    done = run_llmplex("complete", "-m", "openai:gpt-4o-mini", "--json", "--usage", "hi", cwd=tmp_path, env=ENV)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["usage"]["cost_usd"] == price(1).removeprefix("$")
    assert f"cost: {price(1)}" in done.stderr


def test_item_2_complete_usage_says_when_the_price_is_unknown(tmp_path: Path) -> None:
    done = run_llmplex("complete", "-m", "mock:echo", "--usage", "one two three", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert "tokens: 3 input, 3 output, 6 total; cost: unknown" in done.stderr


def test_item_2_without_usage_no_cost_line(tmp_path: Path, priced_fake: FaultServer) -> None:
    done = run_llmplex("complete", "-m", "openai:gpt-4o-mini", "hi", cwd=tmp_path, env=ENV)
    assert done.returncode == 0, done.stderr
    assert "cost:" not in done.stderr


def test_item_2_batch_summary_prints_total_tokens_and_cost(tmp_path: Path, priced_fake: FaultServer) -> None:
    lines = [json.dumps({"id": f"r{i}", "prompt": f"question {i}"}) for i in range(3)]
    (tmp_path / "requests.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    done = run_llmplex(
        "batch", "requests.jsonl", "-o", "results.jsonl", "-m", "openai:gpt-4o-mini", cwd=tmp_path, env=ENV
    )

    assert done.returncode == 0, done.stderr
    assert "3 requests: 3 ok, 0 failed" in done.stderr
    assert f"tokens: 3600 input (3072 cached), 1020 output, 4620 total; cost: {price(3)}" in done.stderr
