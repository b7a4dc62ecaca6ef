"""Issue 28 item 2 (lifecycle): the reaper finds a session's processes in ``/proc``, including a child whose
environment reads empty (the moment of its ``exec``, or one started with ``env -i``), and ends them all."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmplex.mcp.reaper import MARKER, marked, reap


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_marked(session: str, count: int) -> list[int]:
    end = time.monotonic() + 5
    while len(found := marked(session)) < count and time.monotonic() < end:
        time.sleep(0.01)
    return found


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def test_item_2_reaper_ends_a_child_with_an_empty_environment(started: list[subprocess.Popen[bytes]]) -> None:
    """A server that starts a child with an empty environment: the child carries no marker, but its parent does,
    so it is found and ended with it (before, it was left running)."""
    session = uuid.uuid4().hex
    shell = subprocess.Popen(
        ["sh", "-c", "env -i sleep 30 & echo $! ; wait"],
        env={**os.environ, MARKER: session},
        stdout=subprocess.PIPE,
    )
    started.append(shell)
    assert shell.stdout is not None
    child = int(shell.stdout.readline())
    assert sorted(_wait_marked(session, 2)) == sorted([shell.pid, child])
    asyncio.run(reap(session, grace=2.0))
    end = time.monotonic() + 5
    while (_alive(shell.pid) or _alive(child)) and time.monotonic() < end:
        time.sleep(0.01)
    assert not _alive(child) and not _alive(shell.pid)


def test_item_2_reaper_leaves_unrelated_processes_with_an_empty_environment(
    started: list[subprocess.Popen[bytes]],
) -> None:
    """A process with an empty environment that no marked process started is not the session's."""
    session = uuid.uuid4().hex
    stranger = subprocess.Popen(["env", "-i", "sleep", "30"])
    started.append(stranger)
    marked_one = subprocess.Popen(["sleep", "30"], env={**os.environ, MARKER: session})
    started.append(marked_one)
    assert _wait_marked(session, 1) == [marked_one.pid]
    asyncio.run(reap(session, grace=2.0))
    marked_one.wait(5)
    assert _alive(stranger.pid)
