"""A transport for driving the gateway's HTTP protocol in process: it keeps what is written to it."""

from __future__ import annotations

import asyncio
from typing import Any


class RecordingTransport(asyncio.Transport):
    """A transport keeping what is written to it (``writes``), from 127.0.0.1:40000 to 127.0.0.1:8000."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview[int]) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass
