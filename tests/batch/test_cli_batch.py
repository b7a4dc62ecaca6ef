"""``llmplex batch`` in process: result lines, error objects, the journal, and the progress bar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from llmplex.cli.main import cli
from llmplex.providers import mock


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["batch", *args])
    return result.exit_code, result.stderr


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def prompts_seen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The prompt of every request the mock receives."""
    seen: list[str] = []
    take = mock.MockBackend.take

    def recording_take(self: mock.MockBackend, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        seen.append(payload["messages"][-1]["content"])
        return take(self, payload)

    monkeypatch.setattr(mock.MockBackend, "take", recording_take)
    return seen


def test_one_result_per_line_in_order_with_errors_as_objects(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "prompt": "hello there"}),
                "{not json",
                "",
                json.dumps({"prompt": "x", "temprature": 1}),
                json.dumps(["a list"]),
                json.dumps({"id": 7, "model": "mock:other", "messages": [{"role": "user", "content": "hi"}]}),
                json.dumps({"prompt": "typed", "output_strategy": "native", "output": {"type": "integer"}}),
            ]
        )
        + "\n"
    )
    code, stderr = invoke("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo")
    assert code == 15, stderr  # some requests failed
    lines = results(tmp_path / "out.jsonl")
    assert [line["index"] for line in lines] == [0, 1, 2, 3, 4, 5]
    assert lines[0]["id"] == "a" and lines[0]["ok"] and lines[0]["response"]["text"] == "hello there"
    assert lines[0]["response"]["usage"]["total_tokens"] == 4
    assert lines[1]["error"]["type"] == "LLMConfigurationError"
    assert lines[1]["error"]["message"].startswith("line 2 is not JSON")
    assert lines[2]["error"]["type"] == "LLMConfigurationError" and "temprature" in lines[2]["error"]["message"]
    assert lines[3]["error"]["message"] == 'line 5 must be a JSON object like {"prompt": "..."}'
    assert lines[4]["id"] == 7 and lines[4]["response"]["model"] == "other"
    assert lines[5]["ok"] is False and lines[5]["error"]["type"] == "LLMOutputParseError"
    assert "6 requests: 2 ok, 4 failed; ran 4 in" in stderr
    assert not (tmp_path / "out.jsonl.journal").exists()


def test_an_existing_journal_needs_resume(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text('{"prompt": "a"}\n')
    (tmp_path / "out.jsonl.journal").write_text("{}\n")
    code, stderr = invoke("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo")
    assert code == 3
    assert "pass --resume to continue it, or delete it" in stderr


def journal_for(tmp_path: Path, done: dict[int, str], torn: str = "") -> None:
    """Run once to learn the header, then write a journal with ``done`` requests finished."""
    code, _ = invoke("in.jsonl", "-o", "probe.jsonl", "-m", "mock:echo", "-c", "1")
    assert code == 0
    from llmplex.batching.requests_file import read_requests

    _, fingerprint = read_requests(tmp_path / "in.jsonl", "mock:echo")
    header = {"format": "llmplex-batch-journal/1", "fingerprint": fingerprint, "total": 4}
    entries = [
        {"index": i, "record": {"ok": True, "response": {"text": f"{text} (from journal)"}}} for i, text in done.items()
    ]
    body = "".join(json.dumps(line) + "\n" for line in [header, *entries])
    (tmp_path / "out.jsonl.journal").write_text(body + torn)


def test_resume_runs_only_what_the_journal_lacks(tmp_path: Path, prompts_seen: list[str]) -> None:
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"prompt": f"p{i}"}) + "\n" for i in range(4)))
    journal_for(tmp_path, {0: "p0", 2: "p2"}, torn='{"index": 3, "rec')
    prompts_seen.clear()
    code, stderr = invoke("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo", "--resume")
    assert code == 0, stderr
    assert sorted(prompts_seen) == ["p1", "p3"]
    texts = [line["response"]["text"] for line in results(tmp_path / "out.jsonl")]
    assert texts == ["p0 (from journal)", "p1", "p2 (from journal)", "p3"]


def test_resume_refuses_a_journal_of_other_input(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"prompt": f"p{i}"}) + "\n" for i in range(4)))
    journal_for(tmp_path, {0: "p0"})
    code, stderr = invoke("in.jsonl", "-o", "out.jsonl", "-m", "mock:different", "--resume")
    assert code == 3
    assert "was written for a different requests file or model" in stderr


def test_resume_without_a_journal_runs_everything(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text('{"prompt": "a"}\n')
    assert invoke("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo", "--resume")[0] == 0
    assert results(tmp_path / "out.jsonl")[0]["response"]["text"] == "a"


def test_progress_bar_shows_count_rate_and_eta(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"prompt": f"p{i}"}) + "\n" for i in range(30)))
    code, stderr = invoke("in.jsonl", "-o", "out.jsonl", "-m", "mock:echo", "--progress")
    assert code == 0
    assert "30/30" in stderr and "req/s" in stderr and "ETA" in stderr


def test_missing_requests_file_is_a_configuration_error(tmp_path: Path) -> None:
    code, stderr = invoke("absent.jsonl", "-o", "out.jsonl")
    assert code == 3 and "cannot read requests file absent.jsonl" in stderr
