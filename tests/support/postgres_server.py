"""A throwaway PostgreSQL server on 127.0.0.1 for one test (initdb + pg_ctl from the system's PostgreSQL).

Run as root (CI, containers), the server runs as the ``postgres`` user, which PostgreSQL requires.
``tools/ensure_services.sh`` installs PostgreSQL; without it, ``start_postgres`` fails saying how to.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["postgres_url"]

INSTALL = (
    "PostgreSQL is needed for this test: run tools/ensure_services.sh as root, or "
    "'sudo apt-get install -y postgresql' (Debian/Ubuntu) / 'brew install postgresql'"
)


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    initdb = found[-1] if found else shutil.which("initdb")
    if initdb is None:
        raise AssertionError(INSTALL)
    return Path(initdb).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def postgres_url() -> Iterator[str]:
    """Start a fresh server (trust auth, no fsync) and yield ``postgresql://llmplex@127.0.0.1:PORT/postgres``."""
    bindir = _bindir()
    folder = Path(tempfile.mkdtemp(prefix="llmplex-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", _free_port()

    def run(*command: str) -> None:
        done = subprocess.run([*as_user, *command], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"{command[0]} failed: {done.stderr or done.stdout}"

    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c synchronous_commit=off"
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "llmplex", "--auth=trust", "-E", "UTF8")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start")
        try:
            yield f"postgresql://llmplex@127.0.0.1:{port}/postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
