"""MCP test setup: real servers (the SDK's server API, and published ones) and a check that none outlives its test.

Every server a test starts gets ``MCP_TEST_TOKEN=<the test's token>`` in its
environment, which its children inherit; after the test, a process still
carrying the token, or an ``MCPServer`` still holding a session, fails the
test (and is ended, so the next test starts clean).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.mcp import MCPServer
from llmplex.mcp import server as server_module

SERVERS = Path(__file__).parent / "servers"
TOOLBOX = SERVERS / "toolbox.py"
BROKEN = SERVERS / "broken.py"


def call(name: str, arguments: Any, call_id: str = "c1") -> dict[str, str]:
    """A scripted tool call for the mock model."""
    return {"name": name, "arguments": json.dumps(arguments), "id": call_id}


def processes_with(token: str) -> list[int]:
    """The pids of live processes whose environment carries ``MCP_TEST_TOKEN=token``."""
    found = []
    needle = f"MCP_TEST_TOKEN={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def children() -> set[int]:
    """The live (not zombie) child processes of this test process."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def wait_gone(token: str, seconds: float = 5.0) -> list[int]:
    """Poll until no process carries ``token`` (a killed process takes a moment to go); what is left."""
    end = time.monotonic() + seconds
    while (left := processes_with(token)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def wait_seen(token: str, count: int = 1, seconds: float = 5.0) -> list[int]:
    """Poll until ``count`` processes carry ``token`` (a new process's environment shows only once its exec is
    done, a moment after ``Popen`` returns)."""
    end = time.monotonic() + seconds
    while len(found := processes_with(token)) < count and time.monotonic() < end:
        time.sleep(0.01)
    return found


@pytest.fixture
def token() -> str:
    """This test's process marker."""
    return uuid.uuid4().hex


@pytest.fixture(autouse=True)
def no_leaks(token: str) -> Iterator[None]:
    """Fail the test if a server process (or a child of one), any new child process of this one, or an MCP
    session outlives it."""
    before = children()
    yield
    open_sessions = [server.name for server in list(server_module._running) if server._connection is not None]
    for server in list(server_module._running):
        server.close()
    left = wait_gone(token)
    end = time.monotonic() + 5
    while (new := sorted(children() - before)) and time.monotonic() < end:
        time.sleep(0.05)
    for pid in {*left, *new}:
        os.kill(pid, signal.SIGKILL)
    problems = []
    if open_sessions:
        problems.append(f"MCP sessions left open: {open_sessions}")
    if left:
        problems.append(f"server processes left running: {left}")
    if new:
        problems.append(f"child processes left running: {new}")
    if problems:
        pytest.fail("; ".join(problems))


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    """Where the toolbox server leaves marks (hang-started, hang-cancelled)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


@pytest.fixture
def toolbox(token: str, marks: Path) -> MCPServer:
    """The toolbox server over stdio (started on first use)."""
    return MCPServer.stdio(
        sys.executable,
        [str(TOOLBOX), "stdio"],
        name="toolbox",
        env={"MCP_TEST_TOKEN": token, "TOOLBOX_MARK_DIR": str(marks)},
    )


@pytest.fixture
def client() -> Iterator[llmplex.Client]:
    """A client on the mock model, closed after the test."""
    with llmplex.Client() as c:
        yield c


@pytest.fixture
def mock_backend(client: llmplex.Client) -> Any:
    """The mock model of ``client``: push scripted answers, read ``calls``."""
    return client.provider_client("mock")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_toolbox(mode: str) -> tuple[subprocess.Popen[bytes], str]:
    """The toolbox listening on 127.0.0.1 (``http`` or ``sse``); its URL once it accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(TOOLBOX), mode, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MCP_TEST_TOKEN": "http-toolbox"},
    )
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the toolbox {mode} server exited with {process.returncode}") from None
            time.sleep(0.1)
    path = "/mcp" if mode == "http" else "/sse"
    return process, f"http://127.0.0.1:{port}{path}"


@pytest.fixture(scope="module")
def http_toolbox_url() -> Iterator[str]:
    """The toolbox over streamable HTTP, one process for the module."""
    process, url = start_http_toolbox("http")
    yield url
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module")
def sse_toolbox_url() -> Iterator[str]:
    """The toolbox over the older SSE transport, one process for the module."""
    process, url = start_http_toolbox("sse")
    yield url
    process.terminate()
    process.wait(10)


def everything_server() -> Path:
    """The installed ``@modelcontextprotocol/server-everything`` entry point (tox installs it with npm)."""
    prefix = Path(sys.prefix) / "tmp" / "npm"  # tox's {envtmpdir}/npm: the test environment's own prefix
    candidate = prefix / "node_modules" / ".bin" / "mcp-server-everything"
    if candidate.exists():
        return candidate
    found = shutil.which("mcp-server-everything")
    if found:
        return Path(found)
    raise RuntimeError(
        "@modelcontextprotocol/server-everything is not installed: run "
        f"`npm install --prefix {prefix} @modelcontextprotocol/server-everything` (tox's commands_pre does)"
    )
