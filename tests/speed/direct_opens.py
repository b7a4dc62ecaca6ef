"""Shared by the stream-open tests of issue 34 item 5: async streams read to their text, and what each open of
``llmplex.http.direct``'s sender is handed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import llmplex
from llmplex.http.direct import DirectSender


def astreams(llm: llmplex.Client, timeouts: list[float | None]) -> list[str]:
    """The text of one async stream of ``p:m`` per timeout in ``timeouts`` (``None``: the call gives none); the
    client is closed afterwards."""

    async def read() -> list[str]:
        texts: list[str] = []
        try:
            for timeout in timeouts:
                texts.append("".join([e.text or "" async for e in llm.astream("p:m", "hi", timeout=timeout)]))
        finally:
            await llm.aclose()
        return texts

    return asyncio.run(read())


def spy_opens(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """The headers and timeouts each direct open is handed, noted as the opens go on."""
    opened: list[tuple[Any, Any]] = []
    open_ = DirectSender.open

    async def spy(self: DirectSender, url: str, headers: Any, body: bytes, timeout: Any, request: Any) -> Any:
        opened.append((headers, timeout))
        return await open_(self, url, headers, body, timeout, request)

    monkeypatch.setattr(DirectSender, "open", spy)
    return opened
