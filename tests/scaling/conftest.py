"""Fixtures of the scaling tests: the fake Batch APIs, a config pointing at them, the CLI (item 2); a real
redis-server, the fault server and a clean memory storage (item 1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from llmplex.cli.main import cli
from tests.scaling.batch_server import BatchServer
from tests.support.fault_server import FaultServer
from tests.support.fixtures import fault_server, redis_server, redis_session

__all__ = ["batch_api", "fault_server", "fresh_memory_limits", "redis_server", "redis_session"]


@pytest.fixture(autouse=True)
def fresh_memory_limits() -> Iterator[None]:
    """Every test starts with this process's memory:// windows empty (they are per process, not per Client)."""
    from llmplex.reliability.storage import _memory

    _memory().reset()
    yield
    _memory().reset()


@pytest.fixture
def batch_api() -> Iterator[BatchServer]:
    """The fake OpenAI + Anthropic Batch APIs; every body they saw or sent must have kept the contract."""
    with BatchServer() as fake:
        yield fake
    assert not fake.violations, "\n".join(fake.violations)


def write_config(folder: Path, server: BatchServer, *, api: str = "chat", **limits: Any) -> None:
    """``llmplex.toml`` in ``folder``: openai and anthropic on the fake, fast retries, ``limits`` per provider."""
    lines = [
        "[providers.openai]",
        f'base_url = "{server.openai_url}"',
        'api_key = "sk-test-batch-key"',
        f'api = "{api}"',
        *(f"{key} = {value}" for key, value in limits.get("openai", {}).items()),
        "[providers.anthropic]",
        f'base_url = "{server.anthropic_url}"',
        'api_key = "sk-ant-test-batch-key"',
        *(f"{key} = {value}" for key, value in limits.get("anthropic", {}).items()),
        "[throttle]",
        "base_delay = 0.01",
        "max_delay = 0.05",
    ]
    (folder / "llmplex.toml").write_text("\n".join(lines) + "\n")


def write_requests(path: Path, rows: list[dict[str, Any] | str]) -> None:
    """A requests file: dicts as JSON lines, strings as they are."""
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))


def run_batch(*args: str) -> tuple[int, str]:
    """``llmplex batch ARGS`` in this process: exit status and stderr."""
    result = CliRunner().invoke(cli, ["batch", *args])
    return result.exit_code, result.stderr


def run_provider_batch(model: str, *args: str) -> tuple[int, str]:
    """``llmplex batch in.jsonl -o out.jsonl -m MODEL --provider-batch --poll-interval 0.01 ARGS``."""
    return run_batch("in.jsonl", "-o", "out.jsonl", "-m", model, "--provider-batch", "--poll-interval", "0.01", *args)


KEY = "sk-test-ray-key-4f1c"


def config_file(folder: Path, **tables: dict[str, Any]) -> Path:
    """A TOML config of ``tables`` (``{"providers.openai": {...}}``) with fast retries."""
    tables = {"throttle": {"base_delay": 0.01, "max_delay": 0.05}, **tables}
    lines = []
    for name, table in tables.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    path = folder / "llmplex.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def batch(config: Path, requests: Path, output: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--config", str(config), "batch", str(requests), "-o", str(output), *args])
    return result.exit_code, result.stderr


def openai(server: FaultServer, **extra: Any) -> dict[str, Any]:
    return {"base_url": server.url, "api_key": KEY, **extra}


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]
