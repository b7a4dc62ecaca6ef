"""``llmplex batch`` interrupted for real (kill -9, Ctrl-C) in a subprocess, then resumed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).with_name("slow_mock_cli.py")
TOTAL = 300


def write_requests(path: Path) -> None:
    path.write_text("".join(json.dumps({"id": f"r{i}", "prompt": f"request {i}"}) + "\n" for i in range(TOTAL)))


def start(tmp: Path, log: Path, delay: float, *extra: str, hold_after: int = 0) -> subprocess.Popen[str]:
    env = {**os.environ, "SLOW_MOCK_DELAY": str(delay), "SLOW_MOCK_LOG": str(log)}
    env["SLOW_MOCK_HOLD_AFTER"] = str(hold_after)
    command = [sys.executable, str(SCRIPT), "batch", "requests.jsonl", "-o", "results.jsonl", "-m", "mock:echo"]
    return subprocess.Popen(
        [*command, "-c", "4", "--no-progress", *extra],
        cwd=tmp,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def journal_indexes(journal: Path) -> set[int]:
    lines = journal.read_text().splitlines()[1:]
    indexes = set()
    for line in lines:
        with contextlib.suppress(ValueError):  # a line cut by the kill
            indexes.add(json.loads(line)["index"])
    return indexes


def wait_for_results(journal: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) > count:
            return
        assert proc.poll() is None, f"batch ended before it could be interrupted: {proc.communicate()}"
        time.sleep(0.01)
    raise AssertionError("the batch made no progress in 30 s")


def interrupt_and_resume(
    tmp: Path, interrupt: signal.Signals
) -> tuple[set[int], list[str], subprocess.CompletedProcess[str]]:
    """Interrupt a run midway with ``interrupt``; resume it; return what was done before and what ran after."""
    write_requests(tmp / "requests.jsonl")
    journal = tmp / "results.jsonl.journal"
    # from the 80th request on the mock holds its answers: the interrupt always finds the run midway (on a loaded
    # machine this process could otherwise wake after the batch had answered all 300)
    first = start(tmp, tmp / "first.log", delay=0.02, hold_after=80)
    wait_for_results(journal, 40, first)
    first.send_signal(interrupt)
    _, stderr = first.communicate(timeout=30)
    if interrupt == signal.SIGKILL:
        assert first.returncode == -signal.SIGKILL
    else:
        assert first.returncode == 130, stderr
        assert "run the same command with --resume" in stderr
    assert not (tmp / "results.jsonl").exists()
    done_before = journal_indexes(journal)
    assert 40 <= len(done_before) < TOTAL

    second = start(tmp, tmp / "second.log", 0.0, "--resume")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    ran_after = (tmp / "second.log").read_text().splitlines()
    return done_before, ran_after, subprocess.CompletedProcess([], 0, out, err)


def check_results(tmp: Path) -> None:
    lines = [json.loads(line) for line in (tmp / "results.jsonl").read_text().splitlines()]
    assert [line["index"] for line in lines] == list(range(TOTAL))
    assert [line["id"] for line in lines] == [f"r{i}" for i in range(TOTAL)]
    assert all(line["ok"] for line in lines)
    assert [line["response"]["text"] for line in lines] == [f"request {i}" for i in range(TOTAL)]
    assert not (tmp / "results.jsonl.journal").exists()


def test_kill_9_then_resume_loses_and_redoes_nothing(tmp_path: Path) -> None:
    done_before, ran_after, result = interrupt_and_resume(tmp_path, signal.SIGKILL)
    assert sorted(ran_after) == sorted(f"request {i}" for i in range(TOTAL) if i not in done_before)
    assert f"{TOTAL} requests: {TOTAL} ok, 0 failed; ran {TOTAL - len(done_before)} in" in result.stderr
    check_results(tmp_path)


def test_ctrl_c_then_resume(tmp_path: Path) -> None:
    done_before, ran_after, _ = interrupt_and_resume(tmp_path, signal.SIGINT)
    assert sorted(ran_after) == sorted(f"request {i}" for i in range(TOTAL) if i not in done_before)
    check_results(tmp_path)
