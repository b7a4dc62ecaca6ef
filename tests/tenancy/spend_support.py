"""Helpers of the issue 31 tests of items 1, 3, 4 and 5: a keyed gateway, a PostgreSQL server that can be
stopped and started again, and the rows of a database."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select

import llmplex
from llmplex.store.database import open_database
from llmplex.store.schema import calls
from tests.gateway.keyed_support import KeyedGateway, wait_for
from tests.support.postgres_server import _bindir, _free_port


@contextmanager
def running_keyed(config: Mapping[str, Any]) -> Iterator[KeyedGateway]:
    """A started keyed gateway over ``config`` (given a minute to start: a loaded machine imports slowly)."""
    gateway = KeyedGateway(llmplex.Client(dict(config)))
    gateway._thread.start()
    try:
        wait_for(lambda: gateway.server.started or not gateway._thread.is_alive(), timeout=60)
        assert gateway.server.started, "the gateway did not start"
        yield gateway
    finally:
        gateway.stop()


class Postgres:
    """A throwaway PostgreSQL on 127.0.0.1 (trust auth, no fsync) that ``stop`` and ``start`` take down and
    bring back on the same port, with its data."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.folder = Path(tempfile.mkdtemp(prefix="llmplex-pg-"))
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.folder, "postgres", "postgres")
        self.data, self.port = self.folder / "data", _free_port()
        self.url = f"postgresql://llmplex@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self.as_user, *command], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"{command[0]} failed: {done.stderr or done.stdout}"

    def init(self) -> None:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "llmplex", "--auth=trust", "-E", "UTF8")

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        log = str(self.folder / "log")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")


@contextmanager
def postgres() -> Iterator[Postgres]:
    """A started ``Postgres``; stopped and removed afterwards."""
    server = Postgres()
    try:
        server.init()
        server.start()
        try:
            yield server
        finally:
            subprocess.run(
                [*server.as_user, str(server.bindir / "pg_ctl"), "-D", str(server.data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
                check=False,
            )
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)


def rows(url: str) -> list[dict[str, Any]]:
    """Every row of ``calls`` in the database at ``url``, oldest first."""
    engine = open_database(url)
    try:
        with engine.connect() as connection:
            return [dict(row) for row in connection.execute(select(calls).order_by(calls.c.id)).mappings()]
    finally:
        engine.dispose()
