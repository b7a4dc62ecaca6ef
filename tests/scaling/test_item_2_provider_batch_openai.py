"""Issue 15 item 2: ``llmplex batch --provider-batch`` through OpenAI's Files + Batch API (a local fake)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from llmplex.types.pricing import price_of
from tests.scaling.batch_server import BatchServer, Reply
from tests.scaling.conftest import results, run_provider_batch, write_config, write_requests


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_2_openai_results_in_input_order_with_failures_in_place(
    tmp_path: Path, batch_api: BatchServer, api: str
) -> None:
    write_config(tmp_path, batch_api, api=api)
    prompts = [f"question {i}" for i in range(8)]
    prompts[2] = "question 2 [error]"
    prompts[5] = "question 5 [expire]"
    write_requests(tmp_path / "in.jsonl", [{"id": f"q{i}", "prompt": p} for i, p in enumerate(prompts)])

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 15, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [line["index"] for line in lines] == list(range(8))
    assert [line["id"] for line in lines] == [f"q{i}" for i in range(8)]
    for i, line in enumerate(lines):
        if i in (2, 5):
            continue
        assert line["ok"], line
        assert line["response"]["text"] == f"echo: question {i}"
        assert line["response"]["provider"] == "openai"
        assert line["response"]["usage"]["input_tokens"] == len(f"question {i}")  # per row, as the provider reported
        assert line["response"]["usage"]["output_tokens"] == 3
        batch_price = price_of(("openai", "gpt-4o-mini"), len(f"question {i}"), 0, 0, 3, 0, batch=True)
        online_price = price_of(("openai", "gpt-4o-mini"), len(f"question {i}"), 0, 0, 3, 0)
        assert batch_price is not None and online_price is not None and batch_price < online_price
        assert Decimal(str(line["response"]["usage"]["cost_usd"])) == batch_price  # at the batch price
    assert lines[2]["error"]["type"] == "LLMBadRequestError" and lines[2]["error"]["status_code"] == 400
    assert "the prompt was flagged" in lines[2]["error"]["message"]
    assert lines[5]["error"]["type"] == "LLMTimeoutError" and "expired" in lines[5]["error"]["message"]
    assert batch_api.created["openai"] == 1
    (batch,) = batch_api.openai.batches.values()
    returned = [json.loads(line)["custom_id"] for line in batch_api.openai.files[batch["output_file_id"]].splitlines()]
    assert sorted(returned, key=lambda c: int(c[1:])) == ["r0", "r1", "r3", "r4", "r6", "r7"] != returned  # shuffled
    assert not (tmp_path / "out.jsonl.journal").exists()
    assert "8 requests: 6 ok, 2 failed" in stderr


def test_item_2_openai_ids_may_repeat_or_be_missing(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    rows = [
        {"id": "same", "prompt": "one"},
        {"id": "same", "prompt": "two"},
        {"prompt": "three"},
        {"id": None, "prompt": "four"},
        {"id": {"nested": ["any", "json"]}, "prompt": "five"},
        {"id": "x" * 200 + " spaces & ünïcode", "prompt": "six"},
    ]
    write_requests(tmp_path / "in.jsonl", rows)

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 0, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [line["response"]["text"] for line in lines] == [
        "echo: one",
        "echo: two",
        "echo: three",
        "echo: four",
        "echo: five",
        "echo: six",
    ]
    assert [line.get("id") for line in lines] == [
        "same",
        "same",
        None,
        None,
        {"nested": ["any", "json"]},
        rows[5]["id"],
    ]
    sent_ids = [line["custom_id"] for lines_ in batch_api.openai.inputs.values() for line in lines_]
    assert sent_ids == [f"r{i}" for i in range(6)]


def test_item_2_openai_invalid_rows_fail_in_place_and_are_never_sent(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(
        tmp_path / "in.jsonl",
        [
            {"prompt": "fine"},
            "{not json",
            {"prompt": "x", "temprature": 1},
            {"prompt": "late", "timeout": 5},
            {"prompt": "fine too"},
        ],
    )

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 15, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [line["ok"] for line in lines] == [True, False, False, False, True]
    assert "temprature" in lines[2]["error"]["message"]
    assert "timeout cannot be used with --provider-batch" in lines[3]["error"]["message"]
    sent = [line["custom_id"] for lines_ in batch_api.openai.inputs.values() for line in lines_]
    assert sent == ["r0", "r4"]


def test_item_2_openai_rows_split_into_batches_by_request_limit(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api, openai={"batch_max_requests": 3})
    write_requests(tmp_path / "in.jsonl", [{"prompt": f"p{i}"} for i in range(8)])

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 0, stderr
    assert batch_api.created["openai"] == 3
    sizes = [len(lines) for lines in batch_api.openai.inputs.values()]
    assert sizes == [3, 3, 2]
    assert [line["response"]["text"] for line in results(tmp_path / "out.jsonl")] == [f"echo: p{i}" for i in range(8)]


def test_item_2_openai_rows_split_into_batches_by_byte_limit(tmp_path: Path, batch_api: BatchServer) -> None:
    long = "y" * 400
    write_config(tmp_path, batch_api, openai={"batch_max_bytes": 1500})
    write_requests(tmp_path / "in.jsonl", [{"prompt": f"{i} {long}"} for i in range(5)] + [{"prompt": "z" * 2000}])

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 15, stderr
    files = [content for fid, content in batch_api.openai.files.items() if batch_api.openai.file_objects.get(fid)]
    assert len(files) == batch_api.created["openai"] >= 3
    assert all(len(content) <= 1500 for content in files)
    lines = results(tmp_path / "out.jsonl")
    assert all(line["ok"] for line in lines[:5])
    assert lines[5]["error"]["type"] == "LLMBadRequestError" and "more than one batch" in lines[5]["error"]["message"]


def test_item_2_openai_models_never_share_a_batch(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(
        tmp_path / "in.jsonl",
        [{"prompt": "a"}, {"prompt": "b", "model": "openai:gpt-4.1-mini"}, {"prompt": "c"}],
    )

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 0, stderr
    models = sorted({line["body"]["model"] for lines in batch_api.openai.inputs.values() for line in lines})
    assert models == ["gpt-4.1-mini", "gpt-4o-mini"] and batch_api.created["openai"] == 2
    assert [line["response"]["model"] for line in results(tmp_path / "out.jsonl")] == [
        "gpt-4o-mini",
        "gpt-4.1-mini",
        "gpt-4o-mini",
    ]


def test_item_2_openai_a_batch_that_fails_validation_fails_each_of_its_rows(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b [reject]"}])

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 16, stderr
    for line in results(tmp_path / "out.jsonl"):
        assert line["error"]["type"] == "LLMBadRequestError"
        assert "rejected batch" in line["error"]["message"] and "(line 2)" in line["error"]["message"]


def test_item_2_openai_5xx_while_polling_is_retried_by_the_core_policy(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b"}])
    overloaded = Reply.json(
        {"error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}}, 503
    )
    batch_api.fail("GET /v1/batches/", 3, overloaded)

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 0, stderr
    assert [line["response"]["text"] for line in results(tmp_path / "out.jsonl")] == ["echo: a", "echo: b"]
    assert batch_api.created["openai"] == 1
    assert not batch_api.faults


def test_item_2_openai_5xx_past_the_retry_policy_is_a_typed_error_and_resume_collects(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b"}])
    overloaded = Reply.json(
        {"error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}}, 503
    )
    batch_api.fail("GET /v1/batches/", 5, overloaded)  # the default policy makes 5 attempts

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 6, stderr  # LLMServerError
    assert "error: LLMServerError: [openai:gpt-4o-mini] HTTP 503" in stderr
    assert "run the same command with --resume" in stderr and "nothing is submitted twice" in stderr
    assert "Traceback" not in stderr
    assert not (tmp_path / "out.jsonl").exists()

    code, stderr = run_provider_batch("openai:gpt-4o-mini", "--resume")

    assert code == 0, stderr
    assert batch_api.created["openai"] == 1
    assert [line["response"]["text"] for line in results(tmp_path / "out.jsonl")] == ["echo: a", "echo: b"]


@pytest.mark.parametrize("lost", [False, True])
def test_item_2_openai_a_failed_create_is_retried_and_never_makes_a_second_batch(
    tmp_path: Path, batch_api: BatchServer, lost: bool
) -> None:
    """A 500 on create is retried; when the batch was in fact created (the answer lost), it is found by its label."""
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b"}])
    error = Reply.json({"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}, 500)
    batch_api.fail("POST /v1/batches", 1, error, after=lost)

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 0, stderr
    assert batch_api.created["openai"] == 1
    assert batch_api.log.count("POST /v1/batches") == (1 if lost else 2)
    assert "GET /v1/batches?limit=100" in batch_api.log
    assert [line["response"]["text"] for line in results(tmp_path / "out.jsonl")] == ["echo: a", "echo: b"]
