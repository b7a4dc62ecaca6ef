"""A real ``redis-server`` on 127.0.0.1 and a free port, with its files in a temporary directory.

    with RedisServer(tmp_dir) as server:
        url = server.url          # redis://127.0.0.1:PORT/0

Nothing is saved to disk, the server listens on loopback only, and ``stop()``
ends it (SIGTERM, then SIGKILL). ``RedisServer(dir, password="...")`` requires that
password (``url`` carries it); ``pause()``/``resume()`` freeze and thaw the process
(SIGSTOP/SIGCONT: connections are accepted by the kernel, nothing is answered). Tests get it through the
``redis_server`` fixture of ``tests/support/fixtures.py``.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["REDIS_MISSING", "RedisServer", "free_port"]

REDIS_MISSING = (
    "redis-server is not on PATH, and the shared-limits tests (issue 15) run a real one: install it with "
    "`apt-get install -y redis-server` (Debian/Ubuntu, as root; `bash tools/ensure_services.sh` does it and "
    "tox runs that first), `brew install redis` (macOS), or put a redis-server binary on PATH"
)
_START_TIMEOUT = 15.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One redis-server process for a test session."""

    def __init__(self, directory: Path, password: str | None = None) -> None:
        self.directory = directory
        self.password = password
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's URL for ``[limits] storage`` (database 0), with its password if it has one."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): it accepts connections but answers nothing until ``resume()``."""
        assert self._process is not None
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a paused server (SIGCONT)."""
        assert self._process is not None
        self._process.send_signal(signal.SIGCONT)

    def start(self) -> RedisServer:
        """Start on a free port (another when that one is taken meanwhile) and wait until it answers."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(REDIS_MISSING)
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            self.port = free_port()
            self._process = subprocess.Popen(
                [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.directory),
                 "--save", "", "--appendonly", "no", "--daemonize", "no",
                 "--logfile", str(self.directory / f"redis-{self.port}.log"),
                 *(["--requirepass", self.password] if self.password else [])],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            if self._wait_until_ready():
                return self
            self.stop()
        raise RuntimeError(f"redis-server did not start; see the logs in {self.directory}")

    def _wait_until_ready(self) -> bool:
        ends = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < ends:
            assert self._process is not None
            if self._process.poll() is not None:
                return False  # the port was taken after all, or the server refused its arguments
            if self.ping():
                return True
            time.sleep(0.02)
        return False

    def ping(self) -> bool:
        """Whether the server answers PING."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                if self.password:
                    connection.sendall(f"AUTH {self.password}\r\n".encode())
                    if not connection.recv(64).startswith(b"+OK"):
                        return False
                connection.sendall(b"PING\r\n")
                return connection.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def flush(self) -> None:
        """Forget every key (between tests)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(b"FLUSHALL\r\n")
            answer = connection.recv(64)
        if not answer.startswith(b"+OK"):
            raise RuntimeError(f"redis FLUSHALL answered {answer!r}")

    def stop(self) -> None:
        """End the server and wait for it."""
        process, self._process = self._process, None
        if process is None:
            return
        process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
