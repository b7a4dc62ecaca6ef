"""Issue 15 item 2: provider batches survive kill -9 at any moment and resume by polling the same batches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from llmplex.batching.provider_calls import DuplicateBatchWarning
from llmplex.batching.requests_file import read_requests
from tests.scaling.batch_server import BatchServer
from tests.scaling.conftest import results, run_batch, run_provider_batch, write_config, write_requests
from tests.support.cli import LLMPLEX

MODELS = {"openai": "openai:gpt-4o-mini", "anthropic": "anthropic:claude-haiku-4-5"}
ROWS = 7  # in batches of 3: three batches


def start_cli(folder: Path, provider: str) -> subprocess.Popen[str]:
    """``llmplex batch --provider-batch`` as a user runs it, in a child process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")} | {"XDG_CONFIG_HOME": str(folder)}
    command = [str(LLMPLEX), "batch", "in.jsonl", "-o", "out.jsonl", "-m", MODELS[provider], "--provider-batch"]
    return subprocess.Popen(
        [*command, "--poll-interval", "0.02", "--no-progress"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_while_polling(folder: Path, server: BatchServer, provider: str, batches: int) -> list[dict[str, object]]:
    """Start a run whose batches never finish, kill -9 it once it polls all of them; return the journal lines."""
    server.hold.set()
    child = start_cli(folder, provider)
    deadline = time.monotonic() + 60
    while len(server.polled) < batches or min(server.polled.values()) < 2:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the run never polled its batches"
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert not (folder / "out.jsonl").exists()
    return [json.loads(line) for line in (folder / "out.jsonl.journal").read_text().splitlines()]


def setup(folder: Path, server: BatchServer, provider: str) -> None:
    write_config(folder, server, **{provider: {"batch_max_requests": 3}})
    write_requests(folder / "in.jsonl", [{"id": "same", "prompt": f"row {i}"} for i in range(ROWS)])


def check_results(folder: Path) -> None:
    lines = results(folder / "out.jsonl")
    assert [line["response"]["text"] for line in lines] == [f"echo: row {i}" for i in range(ROWS)]
    assert not (folder / "out.jsonl.journal").exists()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_item_2_kill_9_while_polling_then_resume_polls_the_same_batches(
    tmp_path: Path, batch_api: BatchServer, provider: str
) -> None:
    setup(tmp_path, batch_api, provider)

    journal = kill_while_polling(tmp_path, batch_api, provider, batches=3)

    submitted = [line["submit"] for line in journal if "submit" in line]
    ids = [line["batch"]["id"] for line in journal if "batch" in line]
    assert [s["rows"] for s in submitted] == [
        {"r0": 0, "r1": 1, "r2": 2},
        {"r3": 3, "r4": 4, "r5": 5},
        {"r6": 6},
    ]
    assert {s["provider"] for s in submitted} == {provider}
    assert sorted(ids) == sorted(batch_api.polled) and batch_api.created[provider] == 3
    batch_api.hold.clear()

    code, stderr = run_provider_batch(MODELS[provider], "--resume")

    assert code == 0, stderr
    assert batch_api.created[provider] == 3  # exactly one creation per batch
    check_results(tmp_path)


def test_item_2_kill_9_between_submitting_and_recording_the_id_finds_the_batch_by_its_label(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    setup(tmp_path, batch_api, "openai")
    kill_while_polling(tmp_path, batch_api, "openai", batches=3)
    journal = tmp_path / "out.jsonl.journal"
    lines = journal.read_text().splitlines()
    lost = next(i for i, line in enumerate(lines) if '"batch"' in line)
    journal.write_text("\n".join(lines[:lost] + lines[lost + 1 :]) + "\n")  # the id never reached the journal
    batch_api.hold.clear()

    code, stderr = run_provider_batch(MODELS["openai"], "--resume")

    assert code == 0, stderr
    assert batch_api.created["openai"] == 3
    assert "GET /v1/batches?limit=100" in batch_api.log
    check_results(tmp_path)


def test_item_2_anthropic_cannot_look_a_batch_up_so_it_warns_before_submitting_again(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    setup(tmp_path, batch_api, "anthropic")
    kill_while_polling(tmp_path, batch_api, "anthropic", batches=3)
    journal = tmp_path / "out.jsonl.journal"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(line for line in lines if '"batch"' not in line or "r6" in line) + "\n")
    batch_api.hold.clear()

    with pytest.warns(DuplicateBatchWarning, match="may now exist twice"):
        code, stderr = run_provider_batch(MODELS["anthropic"], "--resume")

    assert code == 0, stderr
    assert batch_api.created["anthropic"] == 3 + 3  # every batch whose id was lost went out again
    check_results(tmp_path)


def test_item_2_a_submission_torn_by_the_kill_is_dropped_and_sent_on_resume(
    tmp_path: Path, batch_api: BatchServer
) -> None:
    setup(tmp_path, batch_api, "openai")
    kill_while_polling(tmp_path, batch_api, "openai", batches=3)
    journal = tmp_path / "out.jsonl.journal"
    lines = journal.read_text().splitlines()
    header = lines[0]
    first_submit = next(line for line in lines if '"submit"' in line)
    journal.write_text(header + "\n" + first_submit[: len(first_submit) // 2])  # killed while writing it
    batch_api.hold.clear()

    code, stderr = run_provider_batch(MODELS["openai"], "--resume")

    assert code == 0, stderr
    assert batch_api.created["openai"] == 3 + 3  # nothing had been sent under a torn line: all of it goes now
    check_results(tmp_path)


def test_item_2_a_journal_with_batches_in_flight_cannot_resume_online(tmp_path: Path, batch_api: BatchServer) -> None:
    setup(tmp_path, batch_api, "openai")
    kill_while_polling(tmp_path, batch_api, "openai", batches=3)
    before = (tmp_path / "out.jsonl.journal").read_bytes()
    requests_before = len(batch_api.log)

    code, stderr = run_batch("in.jsonl", "-o", "out.jsonl", "-m", MODELS["openai"], "--resume")

    assert code == 3, stderr
    assert "provider batches still to collect (batch_" in stderr and "resume with --provider-batch" in stderr
    assert (tmp_path / "out.jsonl.journal").read_bytes() == before
    assert len(batch_api.log) == requests_before


def crafted_journal(folder: Path) -> list[str]:
    """A journal as a run killed while polling leaves it: two batches submitted, the first one's rows done."""
    _, fingerprint = read_requests(folder / "in.jsonl", MODELS["openai"])
    ok = {"ok": True, "response": {"text": "echo"}}
    lines = [
        {"format": "llmplex-batch-journal/1", "fingerprint": fingerprint, "total": ROWS},
        {"submit": {"label": "llmplex-0000000000000001", "provider": "openai", "rows": {"r0": 0, "r1": 1, "r2": 2}}},
        {"batch": {"label": "llmplex-0000000000000001", "id": "batch_one"}},
        {"submit": {"label": "llmplex-0000000000000002", "provider": "openai", "rows": {"r3": 3, "r4": 4}}},
        {"batch": {"label": "llmplex-0000000000000002", "id": "batch_two"}},
        *({"index": i, "record": ok} for i in range(3)),
    ]
    return [json.dumps(line) for line in lines]


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (
            '{"submit": {"label": "llmplex-x", "provider": "openai", "rows": {"r0": 99}}}',
            "is not a custom id and a request index below 7",
        ),
        ('{"submit": {"label": "llmplex-x", "provider": "openai", "rows": {"r 0": 0}}}', "is not a custom id"),
        ('{"submit": {"label": "bad label!", "provider": "openai", "rows": {"r0": 0}}}', "is not a new label"),
        (
            '{"submit": {"label": "llmplex-0000000000000001", "provider": "openai", "rows": {"r0": 0}}}',
            "is not a new label",
        ),
        ('{"submit": {"label": "llmplex-y", "provider": "", "rows": {"r0": 0}}}', "is not a provider name"),
        ('{"submit": {"label": "llmplex-y", "provider": "openai", "rows": {}}}', "its rows are not"),
        ('{"submit": {"label": "llmplex-y", "provider": "openai"}}', 'is not a JSON object {"submit"'),
        ('{"batch": {"label": "llmplex-unknown", "id": "batch_1"}}', "names no submission on an earlier line"),
        ('{"batch": {"label": "llmplex-0000000000000002", "id": ""}}', "is not the provider's id of a batch"),
        ('{"batch": {"label": "llmplex-0000000000000002", "id": "batch_again"}}', "already has the id 'batch_two'"),
        ('{"batch": "batch_1"}', 'is not a JSON object {"batch"'),
        ("[1, 2]", 'is not a JSON object {"index"'),
    ],
)
def test_item_2_a_corrupted_journal_stops_the_resume_before_anything_is_sent(
    tmp_path: Path, batch_api: BatchServer, damage: str, problem: str
) -> None:
    setup(tmp_path, batch_api, "openai")
    lines = crafted_journal(tmp_path)
    journal = tmp_path / "out.jsonl.journal"
    journal.write_text("\n".join([*lines, damage, lines[-1]]) + "\n")
    before = journal.read_bytes()

    code, stderr = run_provider_batch(MODELS["openai"], "--resume")

    assert code == 3, stderr
    assert f"line {len(lines) + 1} is damaged: " in stderr and problem in stderr
    assert journal.read_bytes() == before
    assert batch_api.log == []  # nothing was sent, nothing polled


def test_item_2_the_crafted_journal_is_one_a_resume_accepts(tmp_path: Path, batch_api: BatchServer) -> None:
    """The control of the corruption cases: undamaged, it resumes (polls batch_one, batch_two; sends rows 5, 6)."""
    setup(tmp_path, batch_api, "openai")
    (tmp_path / "out.jsonl.journal").write_text("\n".join(crafted_journal(tmp_path)) + "\n")

    code, stderr = run_provider_batch(MODELS["openai"], "--resume")

    assert code == 15, stderr  # the fake never heard of batch_one / batch_two: its rows end as typed errors
    assert (
        batch_api.log[:2] == ["GET /v1/batches/batch_two", "POST /v1/files"]
        or "GET /v1/batches/batch_two" in batch_api.log
    )
    lines = results(tmp_path / "out.jsonl")
    assert [line["ok"] for line in lines] == [True, True, True, False, False, True, True]
    assert (
        lines[3]["error"]["type"] == "LLMBadRequestError"
        and "No batch found with id 'batch_two'" in lines[3]["error"]["message"]
    )
    assert [line["custom_id"] for lines_ in batch_api.openai.inputs.values() for line in lines_] == ["r5", "r6"]


def test_item_2_a_batch_is_never_polled_through_another_provider(tmp_path: Path, batch_api: BatchServer) -> None:
    setup(tmp_path, batch_api, "openai")
    lines = [line.replace('"provider": "openai"', '"provider": "anthropic"') for line in crafted_journal(tmp_path)]
    (tmp_path / "out.jsonl.journal").write_text("\n".join(lines) + "\n")

    code, stderr = run_provider_batch(MODELS["openai"], "--resume")

    assert code == 3, stderr
    assert "batch batch_two was submitted to provider 'anthropic', but its requests now go to 'openai'" in stderr
    assert batch_api.log == []
