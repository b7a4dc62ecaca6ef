"""Helpers of the call-log tests: a database URL per test, reading rows back, seeding rows."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import select

from llmplex.store import CallWriter, calls, open_database

__all__ = ["all_rows", "seed", "sqlite_url"]


def sqlite_url(folder: Path, name: str = "logs.db") -> str:
    """``sqlite:///`` a file in ``folder``."""
    return f"sqlite:///{folder / name}"


def all_rows(url: str) -> list[dict[str, Any]]:
    """Every row of ``calls`` at ``url``, oldest first, as dicts."""
    engine = open_database(url, create=False)
    try:
        with engine.connect() as connection:
            return [dict(r) for r in connection.execute(select(calls).order_by(calls.c.id)).mappings()]
    finally:
        engine.dispose()


def seed(
    url: str,
    *,
    when: datetime,
    provider: str = "openai",
    model: str = "gpt-4o-mini",
    prompt: str = "hello",
    answer: str = "hi",
    cost: str | None = "0.001",
    status: str = "ok",
    conversation_id: str | None = None,
    tokens: tuple[int, int] = (10, 5),
    key_name: str | None = None,
) -> None:
    """Write one made-up call (as the writer writes them) and wait until it is in the database."""
    writer = CallWriter(url)
    row: dict[str, Any] = {
        "created_at": when,
        "conversation_id": conversation_id,
        "model_asked": f"{provider}:{model}",
        "provider": provider,
        "model": model,
        "status": status,
        "error_type": None if status == "ok" else "LLMServerError",
        "prompt": [{"role": "user", "content": prompt}],
        "answer": {"role": "assistant", "content": answer} if status == "ok" else None,
        "prompt_text": prompt,
        "answer_text": answer if status == "ok" else None,
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
        "total_tokens": sum(tokens),
        "cost_usd": None if cost is None or status != "ok" else Decimal(cost),
        "cost_note": None if cost is not None else "no price",
        "latency": 0.5,
        "attempts": 1,
        "cached": False,
        "key_name": key_name,
    }
    writer.submit(row)
    assert writer.flush(30)
    writer.close()
    assert writer.written == 1, "the seeded row was not written"
