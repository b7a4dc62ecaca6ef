"""Run worker processes (``tests/scaling/worker.py``) together and read what they saw."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WORKER_TIMEOUT = 600.0


@dataclass
class Outcome:
    """What all workers saw together."""

    results: list[dict[str, Any]]
    admitted: list[float]
    throttled: list[str]

    @property
    def answered(self) -> int:
        return sum(r["ok"] for r in self.results)

    def errors(self) -> set[str]:
        return {r["error"] for r in self.results if not r["ok"]}

    def failures(self) -> list[str]:
        """Each failed call's error and message, for an assertion's message (which call failed, and why)."""
        return [f"{r['error']}: {r['message']}" for r in self.results if not r["ok"]]


def openai_config(url: str, storage: str = "memory://", **limits: Any) -> dict[str, Any]:
    """A config sending ``openai:`` to the fake server at ``url`` with these provider ``limits``."""
    return {
        "providers": {"openai": {"base_url": url, "api_key": "test-key", **limits}},
        "limits": {"storage": storage},
        "throttle": {"max_attempts": 1},
    }


def run_workers(tmp: Path, jobs: list[dict[str, Any]]) -> Outcome:
    """One worker process per job (forked by ``tests/scaling/worker.py``); once all are warmed up, release them
    together; merge their reports."""
    run = tmp / f"run-{len(list(tmp.glob('run-*')))}"
    run.mkdir()
    go = run / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    job_files = []
    for n, job in enumerate(jobs):
        job_file = run / f"job-{n}.json"
        files = {"ready": str(run / f"ready-{n}"), "go": str(go), "out": str(run / f"out-{n}.json")}
        job_file.write_text(json.dumps({**job, **files}))
        job_files.append(str(job_file))
    command = [sys.executable, "-m", "tests.scaling.worker", *job_files]
    workers = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_until_ready(run, len(jobs), workers)
    finally:
        go.touch()
    output, _ = workers.communicate(timeout=WORKER_TIMEOUT)
    assert workers.returncode == 0, output.decode(errors="replace")
    results: list[dict[str, Any]] = []
    admitted: list[float] = []
    throttled: list[str] = []
    for n in range(len(jobs)):
        report = json.loads((run / f"out-{n}.json").read_text())
        results += report["results"]
        admitted += report["admitted"]
        throttled += report["throttled"]
    return Outcome(results, sorted(admitted), throttled)


def _wait_until_ready(run: Path, count: int, workers: subprocess.Popen[bytes]) -> None:
    ends = time.monotonic() + WORKER_TIMEOUT
    while len(list(run.glob("ready-*"))) < count:
        if workers.poll() is not None:
            output = workers.stdout.read().decode(errors="replace") if workers.stdout else ""
            raise AssertionError(f"a worker ended before the start: {output}")
        assert time.monotonic() < ends, "the workers did not get ready in time"
        time.sleep(0.01)


def worst_window(times: list[float], seconds: float) -> int:
    """The most of ``times`` inside any window ``seconds`` long (closed at both ends)."""
    ordered = sorted(times)
    most, first = 0, 0
    for last, moment in enumerate(ordered):
        while moment - ordered[first] > seconds:
            first += 1
        most = max(most, last - first + 1)
    return most
