"""Issue 15 item 3: a ``--ray`` driver killed mid-run resumes with ``--resume``, no row lost or sent twice.

The first driver is a separate process connected to this module's Ray instance
by its address; it is killed (SIGKILL) once some rows are in its journal. The
resumed run (in this process) must send only the rows the journal lacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.scaling.conftest import batch, config_file, openai, results, write_requests
from tests.scaling.harness import ROOT
from tests.support.fault_server import Fault, FaultServer

ROWS = 16
_WAIT = 300.0  # a busy 2-core machine may take long to start a driver


def journaled(journal: Path) -> set[int]:
    """The rows a journal holds (the header and a torn last line skipped)."""
    lines = journal.read_text(errors="replace").split("\n")[1:-1] if journal.exists() else []
    return {int(line.split('"index":')[1].split(",")[0]) for line in lines if line.startswith('{"index":')}


def test_item_3_ray_driver_killed_mid_run_resumes_without_losing_or_repeating_rows(
    tmp_path: Path, ray_address: str, fault_server: FaultServer
) -> None:
    fault_server.default = Fault.trickle(interval=0.004)  # each answer takes about a second
    config = config_file(tmp_path, **{"providers.openai": openai(fault_server)})
    write_requests(tmp_path / "in.jsonl", [{"model": "openai:gpt-4o-mini", "prompt": f"row {i}"} for i in range(ROWS)])
    output, journal = tmp_path / "out.jsonl", tmp_path / "out.jsonl.journal"
    command = [sys.executable, "-m", "llmplex", "--config", str(config), "batch", str(tmp_path / "in.jsonl")]
    command += ["-o", str(output), "-c", "2", "--ray", ray_address, "--no-progress"]
    driver = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stderr=subprocess.PIPE)
    try:
        ends = time.monotonic() + _WAIT
        while len(journaled(journal)) < 3:
            assert driver.poll() is None, driver.stderr.read().decode() if driver.stderr else ""
            assert time.monotonic() < ends, "the driver journaled nothing in time"
            time.sleep(0.05)
        driver.kill()
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=30)
    before = journaled(journal)
    assert 3 <= len(before) < ROWS and not output.exists()

    fault_server.default = Fault.ok()
    status, stderr = batch(config, tmp_path / "in.jsonl", output, "--resume", "--ray", ray_address, "-c", "4")

    assert status == 0, stderr
    out = results(output)
    assert [r["index"] for r in out] == list(range(ROWS)) and all(r["ok"] for r in out)
    sent = Counter(r.body["messages"][-1]["content"] for r in fault_server.requests)
    assert set(sent) == {f"row {i}" for i in range(ROWS)}  # none missing
    assert all(sent[f"row {i}"] == 1 for i in before)  # the journaled rows were not sent again
    assert not journal.exists()
