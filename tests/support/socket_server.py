"""A bare TCP server on 127.0.0.1 for answers no HTTP server would send: each connection is handed to a
function with the server's stop event, in the server's one thread, and closed after it.

    with SocketServer(lambda connection, stopping: connection.sendall(b"not HTTP")) as server:
        ... server.root ...   # "http://127.0.0.1:PORT"
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

__all__ = ["SocketServer"]


class SocketServer:
    """Accepts connections until stopped, handing each to ``answer(connection, stopping)``; an ``OSError`` while
    answering (the client went) ends that connection only. Stopping sets ``stopping``, so an answer that waits
    on it ends at once."""

    def __init__(self, answer: Callable[[socket.socket, threading.Event], None]) -> None:
        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def __enter__(self) -> SocketServer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self.thread.join()
        self.listener.close()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            with connection, contextlib.suppress(OSError):
                connection.settimeout(2)
                self.answer(connection, self.stopping)
