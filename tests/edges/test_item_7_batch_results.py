"""Issue 21 item 7: a provider-batch result line that cannot be decoded fails only its own row and a later
``--resume`` finishes; two result lines for one custom id flag that row instead of picking one."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.scaling.batch_server import BatchServer, Reply
from tests.scaling.conftest import batch_api, results, run_provider_batch, write_config, write_requests
from tests.scaling.fake_anthropic_batches import AnthropicBatches
from tests.scaling.fake_openai_batches import OpenAIBatches

__all__ = ["batch_api"]

MODELS = {"openai": "openai:gpt-4o-mini", "anthropic": "anthropic:claude-haiku-4-5"}


def _mangle_lines(body: bytes, change: Callable[[dict[str, Any]], list[bytes]]) -> bytes:
    out: list[bytes] = []
    for raw in body.splitlines():
        out += change(json.loads(raw))
    return b"".join(line + b"\n" for line in out)


def _hostile(item: dict[str, Any]) -> list[bytes]:
    """r1: JSON but not a result; r2: not JSON at all; r3: twice (different answers); the rest as sent."""
    line = json.dumps(item).encode()
    custom_id = item["custom_id"]
    if custom_id == "r1":
        return [json.dumps({"custom_id": "r1", "result": {"type": "succeeded", "message": 5}}).encode()]
    if custom_id == "r2":
        return [b'{"custom_id": "r2", "result": {"type": "succ']
    if custom_id == "r3":
        other = json.loads(line.replace(b"echo:", b"changed:")) if b"echo:" in line else item
        return [line, json.dumps(other).encode()]
    return [line]


def _hostile_openai(item: dict[str, Any]) -> list[bytes]:
    custom_id = item["custom_id"]
    if custom_id == "r1":
        return [json.dumps({"custom_id": "r1", "response": {"status_code": 200, "body": "not an object"}}).encode()]
    return _hostile(item)


@pytest.fixture
def mangled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both fakes write their results, then the hostile edits above are applied to them."""
    finish_anthropic = AnthropicBatches._finish
    finish_openai = OpenAIBatches._finish

    def anthropic(self: AnthropicBatches, batch: dict[str, Any]) -> None:
        finish_anthropic(self, batch)
        self.results[batch["id"]] = _mangle_lines(self.results[batch["id"]], _hostile)

    def openai(self: OpenAIBatches, batch: dict[str, Any]) -> None:
        finish_openai(self, batch)
        for name in ("output_file_id", "error_file_id"):
            if batch.get(name):
                self.files[batch[name]] = _mangle_lines(self.files[batch[name]], _hostile_openai)

    monkeypatch.setattr(AnthropicBatches, "_finish", anthropic)
    monkeypatch.setattr(OpenAIBatches, "_finish", openai)


def _stop_the_first_run(server: BatchServer, provider: str) -> None:
    """Every look at the results (5 attempts) is overloaded: the first run stops, to be resumed."""
    if provider == "anthropic":
        server.fail(r"GET /v1/messages/batches/\w+/results", 5, Reply.json({"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}}, 529))  # fmt: skip
    else:
        server.fail(r"GET /v1/files/[\w-]+/content", 5, Reply.json({"error": {"message": "overloaded",
            "type": "server_error", "param": None, "code": None}}, 503))  # fmt: skip


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_item_7_bad_and_duplicate_result_lines_fail_only_their_rows(
    tmp_path: Path, batch_api: BatchServer, mangled: None, provider: str
) -> None:
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"id": f"q{i}", "prompt": f"question {i}"} for i in range(6)])
    _stop_the_first_run(batch_api, provider)
    stopped, stderr = run_provider_batch(MODELS[provider])
    assert stopped == 6 and "--resume" in stderr, stderr  # a passing outage: the run stops, its journal kept
    code, stderr = run_provider_batch(MODELS[provider], "--resume")
    assert code == 15 and "Traceback" not in stderr, stderr
    lines = results(tmp_path / "out.jsonl")
    assert [line["id"] for line in lines] == [f"q{i}" for i in range(6)]
    for i in (0, 4, 5):
        assert lines[i]["response"]["text"] == f"echo: question {i}", lines[i]
    assert lines[1]["ok"] is False and lines[1]["error"]["type"] in ("LLMServerError", "LLMBadRequestError")
    assert lines[2]["error"]["type"] == "LLMServerError" and "without a result" in lines[2]["error"]["message"]
    assert "more than one result" in lines[3]["error"]["message"] and "r3" in lines[3]["error"]["message"]
    assert "response" not in lines[3]  # neither of the two answers is picked
    assert batch_api.created[provider] == 1  # the resume polled the same batch


def test_item_7_a_plugin_whose_reader_dies_at_a_bad_line_fails_the_unread_rows_and_resume_finishes(
    tmp_path: Path, batch_api: BatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin reading results with the SDK's own JSONL decoder raises at the broken line, every time: the rows
    read before it keep their answers, the others fail in place, and the run (and a --resume) ends."""
    import llmplex_anthropic.batch as anthropic_batch

    from llmplex.types import BatchOutcome

    def sdk_reader(client: Any, batch_id: str) -> Iterator[BatchOutcome]:
        for line in client.messages.batches.results(batch_id):  # json.loads of every line: raises at the bad one
            yield BatchOutcome(line.custom_id, "succeeded", raw=line.result.message)

    monkeypatch.setattr(anthropic_batch, "batch_results", sdk_reader)
    finish = AnthropicBatches._finish

    def broken(self: AnthropicBatches, batch: dict[str, Any]) -> None:
        finish(self, batch)
        body = self.results[batch["id"]].splitlines()
        body.insert(2, b"{this line is not json")
        self.results[batch["id"]] = b"".join(line + b"\n" for line in body)

    monkeypatch.setattr(AnthropicBatches, "_finish", broken)
    write_config(tmp_path, batch_api)
    write_requests(tmp_path / "in.jsonl", [{"id": f"q{i}", "prompt": f"question {i}"} for i in range(5)])
    _stop_the_first_run(batch_api, "anthropic")
    stopped, stderr = run_provider_batch(MODELS["anthropic"])
    assert stopped == 6, stderr
    code, stderr = run_provider_batch(MODELS["anthropic"], "--resume")  # used to stop at the same line every time
    assert code == 15 and "Traceback" not in stderr, stderr
    lines = results(tmp_path / "out.jsonl")
    answered = [line for line in lines if "response" in line]
    failed = [line for line in lines if "error" in line]
    assert len(answered) == 2 and len(failed) == 3  # the two lines before the broken one were read
    assert all("could not be decoded past a broken line" in line["error"]["message"] for line in failed)
    assert batch_api.created["anthropic"] == 1
