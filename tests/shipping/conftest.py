"""The release, built once per test session: every distribution into a wheelhouse, checked, with its SBOM.

``tools/release`` runs as a dry run (it never uploads) with ``uv build`` standing in
for ``python -m build`` (the same hatchling hooks, less start-up: the tests build
twelve distributions), offline: the SBOM's venv comes from uv's cache, pinned to
the lock. Under pytest-xdist the workers share one build (a file lock in the
session's shared temporary folder).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "py.lock"


@dataclass(frozen=True)
class Release:
    """What one run of ``tools/release`` left: its output, the wheelhouse, the SBOM, how long it took."""

    returncode: int
    stdout: str
    stderr: str
    dist: Path
    sbom: Path
    third_party: Path  # the echo example plugin's wheel, built apart (a third party's own wheelhouse)
    seconds: float


def _build(folder: Path) -> Release:
    shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed half-way left
    dist, sbom, third_party = folder / "dist", folder / "sbom.cdx.json", folder / "third-party"
    command = [sys.executable, str(ROOT / "tools" / "release"), "--builder", "uv", "--no-isolation", "--offline"]
    command += ["--out-dir", str(dist), "--sbom", str(sbom), "--constraint", str(LOCK), "--no-validate"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=900)
    from uv import find_uv_bin

    echo = [find_uv_bin(), "build", "--quiet", "--wheel", "--no-build-isolation", "--python", sys.executable]
    subprocess.run([*echo, "--out-dir", str(third_party), str(ROOT / "docs/examples/llmplex-echo")], check=True)
    return Release(done.returncode, done.stdout, done.stderr, dist, sbom, third_party, time.monotonic() - started)


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    """The release built once for every test (and every xdist worker) of the session."""
    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp is a folder of the session's own: share that one
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "llmplex-release"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = shared / "release.json"
        if record.exists():
            fields = json.loads(record.read_text())
            built = Release(**{k: Path(v) if k in {"dist", "sbom", "third_party"} else v for k, v in fields.items()})
        else:
            built = _build(shared / "out")
            record.write_text(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(built).items()}))
    return built
