"""Issue 31 item 6, on ``llmplex serve`` itself: eight 32 MB bodies sent without a key cost the process
(almost) no memory, and a 16 MB header line is answered 431.

Before, the bodies were read before the key was checked (eight of them cost 277 MB) and the
header line was answered 200. The peak resident memory (``VmHWM``, reset through ``clear_refs``)
is read from ``/proc``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.gateway.harness import MASTER_KEY
from tests.gateway.keyed_support import ServeProcess, write_config
from tests.tenancy.guard_support import connect, read_answer

MB = 1024 * 1024
CHAT = "/v1/chat/completions"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    config = {"gateway": {"database": f"sqlite:///{tmp_path / 'gw.db'}", "models": ["mock:echo"]}}
    process = ServeProcess(write_config(tmp_path / "llmplex.toml", config), {})
    try:
        yield process
    finally:
        process.stop()


def _send_without_key(port: int, size: int, statuses: list[int]) -> None:
    """POST a body of ``size`` bytes without a key, as fast as the gateway takes it; keep the answer's status."""
    with connect(port) as sock:
        sock.sendall(f"POST {CHAT} HTTP/1.1\r\nhost: x\r\ncontent-length: {size}\r\n\r\n".encode())
        block, sent = b"x" * MB, 0
        try:
            while sent < size:
                sent += sock.send(block)
        except OSError:  # closed by the gateway after its 401
            pass
        statuses.append(read_answer(sock)[0])


def test_item_6_serve_eight_32_mb_bodies_without_a_key_cost_no_memory(served: ServeProcess) -> None:
    port = int(served.url.rsplit(":", 1)[1])
    auth = {"authorization": f"Bearer {MASTER_KEY}"}
    hello = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}
    assert httpx.post(served.url + CHAT, json=hello, headers=auth, timeout=30).status_code == 200
    pid = served.process.pid
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak resident size starts again from now
    before = _kib(pid, "VmRSS")
    statuses: list[int] = []
    senders = [threading.Thread(target=_send_without_key, args=(port, 32 * MB, statuses)) for _ in range(8)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(60)
    grown = (_kib(pid, "VmHWM") - before) / 1024
    print(f"eight 32 MB bodies without a key: peak RSS +{grown:.1f} MB")
    assert statuses == [401] * 8
    assert grown < 16, f"the process grew by {grown:.1f} MB"  # was 277 MB when bodies were read first

    with connect(port) as sock:
        sock.sendall(f"POST {CHAT} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {MASTER_KEY}\r\nx-big: ".encode())
        sent = 0
        try:
            while sent < 16 * MB:
                sent += sock.send(b"y" * MB)
        except OSError:
            pass
        assert read_answer(sock)[0] == 431
    assert httpx.post(served.url + CHAT, json=hello, headers=auth, timeout=30).status_code == 200
