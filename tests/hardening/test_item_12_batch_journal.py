"""Issue 12 item 12: ``llmplex batch`` reads its journal and its rows as hostile input, and its exit status says
whether requests failed. Every test runs the real ``llmplex`` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmplex.batching.requests_file import read_requests
from tests.support.cli import run_llmplex

MODEL = "mock:echo"
OK = {"ok": True, "response": {"text": "request 0", "model": "echo", "provider": "mock"}}


def _requests(directory: Path, count: int = 3) -> Path:
    path = directory / "requests.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", "prompt": f"request {i}"}) + "\n" for i in range(count)))
    return path


def _journal(directory: Path, requests: Path, *lines: bytes) -> Path:
    """A journal for ``requests`` whose header is right, followed by ``lines``."""
    _, fingerprint = read_requests(requests, MODEL)
    header = {"format": "llmplex-batch-journal/1", "fingerprint": fingerprint, "total": 3}
    journal = directory / "results.jsonl.journal"
    journal.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines))
    return journal


def _entry(index: object, record: object = OK) -> bytes:
    return json.dumps({"index": index, "record": record}).encode() + b"\n"


def _assert_one_paragraph(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1 and stderr.startswith("error: "), stderr


@pytest.mark.parametrize(
    "damaged",
    [
        b"this is not json\n",
        b'{"index": 1}\n',
        _entry("1"),
        _entry(True),
        _entry(7),
        _entry(-1),
        _entry(1, {}),
        _entry(1, {"ok": True}),
        _entry(1, {"ok": False, "error": "boom"}),
        b"[1, 2]\n",
        b'{"index": 1, "record": {"ok": true, "response": {"text": "caf\xe9"}}}\n',
        b"[" * 50_000 + b"]" * 50_000 + b"\n",
    ],
    ids=[
        "garbage",
        "no-record",
        "string-index",
        "bool-index",
        "index-past-end",
        "negative-index",
        "empty-record",
        "ok-without-response",
        "error-not-object",
        "not-object",
        "not-utf8",
        "deeply-nested",
    ],
)
def test_item_12_damaged_journal_line_stops_the_run_and_keeps_the_journal(tmp_path: Path, damaged: bytes) -> None:
    requests = _requests(tmp_path)
    journal = _journal(tmp_path, requests, _entry(0), damaged, b'{"index": 2, "rec')  # and a line torn by a kill
    before = journal.read_bytes()
    result = run_llmplex("batch", str(requests), "-o", "results.jsonl", "-m", MODEL, "--resume", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    _assert_one_paragraph(result.stderr)
    assert f"journal {journal.name}" in result.stderr or str(journal) in result.stderr
    assert "line 3" in result.stderr
    assert "delete that line" in result.stderr and "delete the journal" in result.stderr
    assert journal.read_bytes() == before  # not truncated, not deleted
    assert not (tmp_path / "results.jsonl").exists()


def test_item_12_valid_journal_with_torn_tail_resumes_and_reuses_records(tmp_path: Path) -> None:
    requests = _requests(tmp_path)
    stored = {"ok": True, "response": {"text": "from the journal"}}
    _journal(tmp_path, requests, _entry(1, stored), b'{"index": 0, "rec')
    result = run_llmplex("batch", str(requests), "-o", "results.jsonl", "-m", MODEL, "--resume", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [line["index"] for line in lines] == [0, 1, 2]
    assert lines[1]["response"] == {"text": "from the journal"}
    assert not (tmp_path / "results.jsonl.journal").exists()
    # a string index used to be read as a number: now it is damage, and the journal stays
    _journal(tmp_path, requests, _entry("1", stored))
    again = run_llmplex("batch", str(requests), "-o", "results.jsonl", "-m", MODEL, "--resume", cwd=tmp_path)
    assert again.returncode == 3 and (tmp_path / "results.jsonl.journal").exists()


def test_item_12_output_in_a_missing_directory_fails_before_any_request(tmp_path: Path) -> None:
    requests = _requests(tmp_path)
    result = run_llmplex("batch", str(requests), "-o", "missing/dir/results.jsonl", "-m", MODEL, cwd=tmp_path)
    assert result.returncode == 3
    _assert_one_paragraph(result.stderr)
    assert "missing/dir" in result.stderr and "does not exist" in result.stderr
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    ("rows", "status"),
    [
        ([{"prompt": "a"}, {"prompt": "b"}], 0),
        ([{"prompt": "a"}, {"prompt": 5}], 15),
        ([{"prompt": 5}, {"messages": 5}, {"prompt": "a", "temperature": "hot"}], 16),
    ],
    ids=["none-failed", "some-failed", "all-failed"],
)
def test_item_12_exit_status_says_whether_requests_failed(tmp_path: Path, rows: list[object], status: int) -> None:
    (tmp_path / "requests.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = run_llmplex("batch", "requests.jsonl", "-o", "results.jsonl", "-m", MODEL, cwd=tmp_path)
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == len(rows)


def test_item_12_hostile_rows_become_errors_in_place(tmp_path: Path) -> None:
    rows = [
        b"\xef\xbb\xbf" + json.dumps({"id": "bom", "prompt": "first line after a BOM"}).encode(),
        b"[1, 2, 3]",
        b'"just a string"',
        json.dumps({"id": "system", "prompt": "hi", "system": 5}).encode(),
        json.dumps({"id": "prev", "prompt": "hi", "previous_response_id": 5}).encode(),
        json.dumps({"id": "popts", "prompt": "hi", "provider_options": "x"}).encode(),
        json.dumps({"id": "model", "prompt": "hi", "model": ["mock:echo"]}).encode(),
        json.dumps({"id": "huge", "prompt": "word " * 400_000}).encode(),
        b'{"id": "latin1", "prompt": "caf\xe9"}',
        json.dumps({"id": "sep", "prompt": "a\u2028b\u2029c"}, ensure_ascii=False).encode(),
        json.dumps({"id": "nul-escape", "prompt": "a\u0000b"}).encode(),
        b'{"id": "nul-raw", "prompt": "a\x00b"}',
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps({"id": "ok", "prompt": "still fine"}).encode(),
    ]
    (tmp_path / "requests.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    result = run_llmplex("batch", "requests.jsonl", "-o", "results.jsonl", "-m", MODEL, cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 15, result.stderr
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in results] == list(range(len(rows)))
    by_id = {r.get("id"): r for r in results}
    for ok in ("bom", "huge", "sep", "nul-escape", "ok"):
        assert by_id[ok]["ok"], by_id[ok]
    failed = [r for r in results if not r["ok"]]
    assert len(failed) == len(rows) - 5
    assert all(r["error"]["type"] == "LLMConfigurationError" for r in failed), failed
    assert "UTF-8" in results[8]["error"]["message"]
    assert "nested too deeply" in results[12]["error"]["message"]
