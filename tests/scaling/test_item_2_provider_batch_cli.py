"""Issue 15 item 2: what ``--provider-batch`` refuses, what it shows, and how it paces its polls."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from llmplex.batching.provider_run import poll_intervals
from tests.plugins.anthropic import wire
from tests.scaling.batch_server import BatchServer, Reply
from tests.scaling.conftest import results, run_batch, run_provider_batch, write_config, write_requests


def test_item_2_a_provider_without_batch_hooks_is_refused_before_anything_is_sent(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a", "model": "openai:gpt-4o-mini"}, {"prompt": "b"}])

    code, stderr = run_batch("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo", "--provider-batch")

    assert code == 3, stderr
    assert "provider 'mock' (llmplex) has no provider-native batch" in stderr
    assert "llmplex_batch_submit, llmplex_batch_poll, llmplex_batch_results" in stderr
    assert "Nothing was sent" in stderr
    assert batch_api.log == []
    assert not (tmp_path / "out.jsonl").exists()
    assert not (tmp_path / "out.jsonl.journal").exists()  # a first run that sent nothing can simply be run again


def test_item_2_poll_interval_needs_provider_batch(tmp_path: Path) -> None:
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}])

    code, stderr = run_batch("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo", "--poll-interval", "5")

    assert code == 3 and "--poll-interval applies to provider batches only" in stderr
    code, stderr = run_batch(
        "in.jsonl", "-o", "out.jsonl", "-m", "mock:echo", "--provider-batch", "--poll-interval", "0"
    )
    assert code == 2 and "--poll-interval" in stderr


def test_item_2_progress_lines_show_the_providers_own_counts(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b [error]"}, {"prompt": "c"}])
    write_requests(tmp_path / "in2.jsonl", [{"prompt": "a"}, {"prompt": "b"}])

    code, stderr = run_provider_batch("openai:gpt-4o-mini")
    (batch_id,) = batch_api.openai.batches

    assert code == 15, stderr
    assert f"batch {batch_id}: in_progress (total 3, completed 0, failed 0)\n" in stderr
    assert f"batch {batch_id}: completed (total 3, completed 2, failed 1)\n" in stderr
    assert stderr.count(f"batch {batch_id}: in_progress") == 1  # a line when something changed, not per poll

    code, stderr = run_batch(
        "in2.jsonl",
        "-o",
        "out2.jsonl",
        "-m",
        "anthropic:claude-haiku-4-5",
        "--provider-batch",
        "--poll-interval",
        "0.01",
    )
    (batch_id,) = batch_api.anthropic.batches

    assert code == 0, stderr
    assert f"batch {batch_id}: in_progress (processing 2, succeeded 0, errored 0, canceled 0, expired 0)\n" in stderr
    assert f"batch {batch_id}: ended (processing 0, succeeded 2, errored 0, canceled 0, expired 0)\n" in stderr

    code, stderr = run_batch(
        "in2.jsonl",
        "-o",
        "out3.jsonl",
        "-m",
        "anthropic:claude-haiku-4-5",
        "--provider-batch",
        "--poll-interval",
        "0.01",
        "--no-progress",
    )
    assert code == 0 and "batch msgbatch_" not in stderr


def test_item_2_the_progress_bar_carries_the_providers_counts(
    tmp_path: Path, batch_api: BatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b"}])

    code, stderr = run_provider_batch("openai:gpt-4o-mini", "--progress")

    assert code == 0, stderr
    (batch_id,) = batch_api.openai.batches
    assert f"{batch_id}: completed (total 2, completed 2, failed 0)" in stderr and "2/2" in stderr


def test_item_2_the_default_poll_interval_backs_off_from_5_to_60_seconds() -> None:
    assert list(itertools.islice(poll_intervals(None), 8)) == [
        5.0,
        7.5,
        11.25,
        16.875,
        25.3125,
        37.96875,
        56.953125,
        60.0,
    ]
    assert list(itertools.islice(poll_intervals(None), 20))[-1] == 60.0
    assert list(itertools.islice(poll_intervals(0.5), 3)) == [0.5, 0.5, 0.5]


def test_item_2_an_online_run_can_be_finished_through_provider_batches(tmp_path: Path, batch_api: BatchServer) -> None:
    """Rows an interrupted online run finished stay as they are; only the others are submitted."""
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": f"p{i}"} for i in range(4)])
    code, _ = run_batch(
        "in.jsonl", "-o", "probe.jsonl", "-m", "openai:gpt-4o-mini", "--provider-batch", "--poll-interval", "0.01"
    )
    assert code == 0
    header = {"format": "llmplex-batch-journal/1", "total": 4}
    from llmplex.batching.requests_file import read_requests

    header["fingerprint"] = read_requests(tmp_path / "in.jsonl", "openai:gpt-4o-mini")[1]
    online = {"ok": True, "response": {"text": "answered online", "provider": "openai", "model": "gpt-4o-mini"}}
    (tmp_path / "out.jsonl.journal").write_text(
        json.dumps(header) + "\n" + "".join(json.dumps({"index": i, "record": online}) + "\n" for i in (0, 2))
    )

    code, stderr = run_provider_batch("openai:gpt-4o-mini", "--resume")

    assert code == 0, stderr
    texts = [line["response"]["text"] for line in results(tmp_path / "out.jsonl")]
    assert texts == ["answered online", "echo: p1", "answered online", "echo: p3"]
    last_batch = list(batch_api.openai.inputs.values())[-1]
    assert [line["custom_id"] for line in last_batch] == ["r1", "r3"]
    assert "4 requests: 4 ok, 0 failed; ran 2 in" in stderr


@pytest.mark.parametrize(("provider", "api"), [("openai", "chat"), ("openai", "responses"), ("anthropic", "chat")])
def test_item_2_structured_output_is_sent_natively_and_validated_per_row(
    tmp_path: Path, batch_api: BatchServer, provider: str, api: str
) -> None:
    schema = {
        "type": "object",
        "properties": {"echo": {"type": "string"}},
        "required": ["echo"],
        "additionalProperties": False,
    }
    write_config(tmp_path, batch_api, api=api)
    rows = [{"prompt": "a", "output": schema}, {"prompt": "b [badjson]", "output": schema}, {"prompt": "c"}]
    write_requests(tmp_path / "in.jsonl", rows)
    model = "openai:gpt-4o-mini" if provider == "openai" else "anthropic:claude-haiku-4-5"

    code, stderr = run_provider_batch(model)

    assert code == 15, stderr
    lines = results(tmp_path / "out.jsonl")
    assert lines[0]["response"]["output"] == {"echo": "a"}
    assert lines[1]["error"]["type"] == "LLMOutputParseError"
    assert lines[2]["response"]["output"] is None and lines[2]["response"]["text"] == "echo: c"


def test_item_2_output_retries_cannot_be_asked_of_a_provider_batch(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a", "output": {"type": "object"}, "output_retries": 2}])

    code, stderr = run_batch("in.jsonl", "-o", "out.jsonl", "-m", "openai:gpt-4o-mini", "--provider-batch")

    assert code == 16, stderr
    assert (
        "output_retries cannot be used with --provider-batch" in results(tmp_path / "out.jsonl")[0]["error"]["message"]
    )
    assert batch_api.log == []


def test_item_2_a_rejected_key_while_polling_stops_the_run_and_keeps_the_batches(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}])
    body = {
        "error": {
            "message": "Incorrect API key provided",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    batch_api.fail("GET /v1/batches/", 1, Reply.json(body, 401))

    code, stderr = run_provider_batch("openai:gpt-4o-mini")

    assert code == 3, stderr  # LLMAuthenticationError: fix the key, then --resume
    assert "LLMAuthenticationError" in stderr and "are kept: run the same command with --resume" in stderr
    code, stderr = run_provider_batch("openai:gpt-4o-mini", "--resume")
    assert code == 0, stderr
    assert batch_api.created["openai"] == 1


def test_item_2_results_that_are_gone_fail_their_rows_in_place(tmp_path: Path, batch_api: BatchServer) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b"}])
    gone = Reply.json(wire.error_body("not_found_error", "The results of this batch are no longer available"), 404)
    batch_api.fail(r"GET /v1/messages/batches/\w+/results", 1, gone)

    code, stderr = run_provider_batch("anthropic:claude-haiku-4-5")

    assert code == 16, stderr
    for line in results(tmp_path / "out.jsonl"):
        assert line["error"]["type"] == "LLMBadRequestError" and line["error"]["status_code"] == 404
        assert "no longer available" in line["error"]["message"]
    assert not (tmp_path / "out.jsonl.journal").exists()
