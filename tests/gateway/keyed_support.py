"""Gateways with virtual keys for the tests of items 3, 4 and 6: in a thread (``running_keyed``) or as
``llmplex serve`` processes (``ServeProcess``), plus small HTTP helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

import llmplex
from llmplex.gateway.keyed import keyed_app
from tests.gateway.harness import MASTER_KEY, Gateway, ListRecorder

MASTER = {"authorization": f"Bearer {MASTER_KEY}"}
PRICED = "faulty:gpt-4o-mini"  # the fault server's default answer: 19 in, 10 out = $0.00000885 at gpt-4o-mini's price


def chat(model: str = PRICED, text: str = "hello", **extra: Any) -> dict[str, Any]:
    """A Chat Completions request body."""
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


class KeyedGateway(Gateway):
    """``tests.gateway.harness.Gateway`` built by ``keyed_app`` (keys, limits, spend log, admin API)."""

    def __init__(self, client: llmplex.Client) -> None:
        self.client = client
        self.recorder = ListRecorder()
        self.app = keyed_app(client, MASTER_KEY, extra_recorders=(self.recorder,))
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=0, loop="uvloop", http="httptools", log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        import threading

        self._thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def keys(self) -> Any:
        return self.app.state.keys

    def flush(self, records: int | None = None) -> None:
        """Wait until ``records`` requests (all, by default, once none is in flight) are in the database.

        A stream is recorded just after its last byte reached the client, so a test that has read
        a whole stream names how many records it waits for."""
        if records is not None:
            self.recorder.wait_count(records)
        assert self.app.state.spend_recorder.writer.flush(20)

    def create_key(self, name: str, **body: Any) -> str:
        answer = httpx.post(f"{self.url}/admin/keys", json={"name": name, **body}, headers=MASTER, timeout=10)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["key"])


@contextmanager
def running_keyed(config: Mapping[str, Any]) -> Iterator[KeyedGateway]:
    gateway = KeyedGateway(llmplex.Client(dict(config)))
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()


def write_config(path: Path, config: Mapping[str, Any]) -> Path:
    """``config`` as a TOML file (the few shapes these tests use)."""
    lines: list[str] = []

    def value(v: Any) -> str:
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()

    top = {k: v for k, v in config.items() if not isinstance(v, dict)}
    lines += [f"{k} = {value(v)}" for k, v in top.items()]
    for table, items in config.items():
        if not isinstance(items, dict):
            continue
        nested = {k: v for k, v in items.items() if isinstance(v, dict)}
        lines.append(f"[{table}]")
        lines += [f"{k} = {value(v)}" for k, v in items.items() if not isinstance(v, dict)]
        for name, sub in nested.items():
            lines.append(f"[{table}.{name}]")
            lines += [f"{k} = {value(v)}" for k, v in sub.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


class ServeProcess:
    """``llmplex serve --config FILE --port 0`` as its own process; ``url`` once it announced it."""

    def __init__(self, config_file: Path, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llmplex", "serve", "--config", str(config_file), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env, "LLMPLEX_MASTER_KEY": MASTER_KEY},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on" not in line:
            self.process.kill()
            raise AssertionError(f"llmplex serve did not start: {line!r} {self.process.stderr.read()[-2000:]!r}")
        self.url = line.split("listening on ")[1].split()[0]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    """Poll ``predicate`` until true (bounded; a test fails instead of hanging)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)
