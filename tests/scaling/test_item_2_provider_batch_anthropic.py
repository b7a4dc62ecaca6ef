"""Issue 15 item 2: ``llmplex batch --provider-batch`` through Anthropic's Message Batches API (a local fake)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from llmplex.types.pricing import price_of
from tests.plugins.anthropic import wire
from tests.scaling.batch_server import BatchServer, Reply
from tests.scaling.conftest import results, run_provider_batch, write_config, write_requests

MODEL = "anthropic:claude-haiku-4-5"


def test_item_2_anthropic_results_in_input_order_with_failures_in_place(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    prompts = [f"question {i}" for i in range(9)]
    prompts[1] = "question 1 [error]"
    prompts[4] = "question 4 [expire]"
    prompts[6] = "question 6 [cancel]"
    write_requests(tmp_path / "in.jsonl", [{"id": f"q{i}", "prompt": p} for i, p in enumerate(prompts)])

    code, stderr = run_provider_batch(MODEL)

    assert code == 15, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [line["id"] for line in lines] == [f"q{i}" for i in range(9)]
    for i in (0, 2, 3, 5, 7, 8):
        response = lines[i]["response"]
        assert response["text"] == f"echo: question {i}"
        assert response["provider"] == "anthropic" and response["model"] == "claude-haiku-4-5"
        assert response["usage"]["input_tokens"] == len(f"question {i}") and response["usage"]["output_tokens"] == 3
        batch_price = price_of(("anthropic", "claude-haiku-4-5"), len(f"question {i}"), 0, 0, 3, 0, batch=True)
        assert batch_price is not None
        assert Decimal(str(response["usage"]["cost_usd"])) == batch_price
    assert lines[1]["error"]["type"] == "LLMBadRequestError"
    assert "invalid_request_error" in lines[1]["error"]["message"]
    assert lines[4]["error"]["type"] == "LLMTimeoutError" and lines[4]["error"]["retryable"] is True
    assert lines[6]["error"]["type"] == "LLMAPIError" and "canceled" in lines[6]["error"]["message"]
    assert batch_api.created["anthropic"] == 1
    (returned,) = [
        [json.loads(line)["custom_id"] for line in body.splitlines()] for body in batch_api.anthropic.results.values()
    ]
    assert sorted(returned, key=lambda c: int(c[1:])) == [f"r{i}" for i in range(9)] != returned  # shuffled
    sent = batch_api.anthropic.requests
    assert [item["custom_id"] for items in sent.values() for item in items] == [f"r{i}" for i in range(9)]


def test_item_2_anthropic_duplicate_and_missing_ids_and_splitting(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api, anthropic={"batch_max_requests": 2})
    rows = [{"id": "dup", "prompt": "a"}, {"id": "dup", "prompt": "b"}, {"prompt": "c"}, {"id": "~!@", "prompt": "d"}]
    write_requests(tmp_path / "in.jsonl", rows)

    code, stderr = run_provider_batch(MODEL)

    assert code == 0, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [(line.get("id"), line["response"]["text"]) for line in lines] == [
        ("dup", "echo: a"),
        ("dup", "echo: b"),
        (None, "echo: c"),
        ("~!@", "echo: d"),
    ]
    assert batch_api.created["anthropic"] == 2
    assert [[i["custom_id"] for i in items] for items in batch_api.anthropic.requests.values()] == [
        ["r0", "r1"],
        ["r2", "r3"],
    ]


def test_item_2_anthropic_params_are_the_messages_payload(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(
        tmp_path / "in.jsonl",
        [{"messages": [{"role": "user", "content": "hi"}], "system": "Be terse.", "max_tokens": 50, "stop": ["\n"]}],
    )

    code, stderr = run_provider_batch(MODEL)

    assert code == 0, stderr
    (item,) = next(iter(batch_api.anthropic.requests.values()))
    assert item["params"] == {
        "model": "claude-haiku-4-5",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 50,
        "stop_sequences": ["\n"],
        "system": "Be terse.",
    }


@pytest.mark.parametrize("failures", [2, 5])
def test_item_2_anthropic_overloaded_while_polling(tmp_path: Path, batch_api: BatchServer, failures: int) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}])
    batch_api.fail(
        "GET /v1/messages/batches/", failures, Reply.json(wire.error_body("overloaded_error", "Overloaded"), 529)
    )

    code, stderr = run_provider_batch(MODEL)

    if failures < 5:  # retried by the core policy (5 attempts)
        assert code == 0, stderr
        assert results(tmp_path / "out.jsonl")[0]["response"]["text"] == "echo: a"
        return
    assert code == 6, stderr
    assert "LLMServerError" in stderr and "529 (overloaded_error)" in stderr and "--resume" in stderr
    code, stderr = run_provider_batch(MODEL, "--resume")
    assert code == 0, stderr
    assert batch_api.created["anthropic"] == 1


def test_item_2_anthropic_a_refused_batch_fails_its_rows_and_the_others_go_on(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    write_config(tmp_path, batch_api, anthropic={"batch_max_requests": 2})
    write_requests(tmp_path / "in.jsonl", [{"prompt": p} for p in "abcd"])
    refused = wire.error_body("invalid_request_error", "requests: too many requests in this batch")
    batch_api.fail("POST /v1/messages/batches$", 1, Reply.json(refused, 400))

    code, stderr = run_provider_batch(MODEL)

    assert code == 15, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [line["ok"] for line in lines] == [False, False, True, True]
    assert lines[0]["error"]["type"] == "LLMBadRequestError" and "too many requests" in lines[0]["error"]["message"]
    assert batch_api.created["anthropic"] == 1 and batch_api.log.count("POST /v1/messages/batches") == 2
