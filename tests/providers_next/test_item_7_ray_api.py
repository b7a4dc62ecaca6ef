"""Issue 26 item 7: a public Python API for Ray batches — ``llmplex.batch(requests, ray=True)`` for a local
instance, ``ray="ADDRESS"`` for a cluster, the same on ``abatch`` (the suite's local Ray: tests/conftest.py's
``ray_address``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import llmplex
from llmplex.errors import LLMConfigurationError

ROWS: list[dict[str, Any]] = [{"model": "mock:echo", "prompt": f"row {i}"} for i in range(6)]


def _texts(results: list[Any]) -> list[str]:
    return [r.text if isinstance(r, llmplex.Response) else type(r).__name__ for r in results]


def test_item_7_batch_with_ray_true_answers_every_row_in_order_with_errors_in_place(ray_address: str) -> None:
    rows = [*ROWS[:3], {"model": "mock:echo"}, {"model": "nosuch:model", "prompt": "x"}, *ROWS[3:]]
    seen: list[int] = []
    results = llmplex.batch(rows, concurrency=3, ray=True, on_result=lambda i, _: seen.append(i))
    assert _texts(results) == [
        "row 0", "row 1", "row 2", "LLMConfigurationError", "LLMConfigurationError", "row 3", "row 4", "row 5",
    ]  # fmt: skip
    assert sorted(seen) == list(range(8))
    assert all(r.provider == "mock" for r in results if isinstance(r, llmplex.Response))
    assert "needs a 'prompt'" in str(results[3]) and "nosuch" in str(results[4])


def test_item_7_abatch_with_a_ray_address_and_workers(ray_address: str) -> None:
    async def main() -> list[Any]:
        return await llmplex.abatch(ROWS, concurrency=2, ray=ray_address, ray_workers=2)

    assert _texts(asyncio.run(main())) == [f"row {i}" for i in range(6)]


def test_item_7_abatch_on_ray_leaves_the_event_loop_free(ray_address: str) -> None:
    from llmplex.testing.loop_lag import LoopLag

    async def main() -> tuple[list[Any], float]:
        async with LoopLag() as lag:
            results = await llmplex.abatch(ROWS, ray=True)
        return results, lag.worst

    results, worst = asyncio.run(main())
    assert len(results) == 6 and worst < 0.5, worst


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ray": ""}, "ray must be True"),
        ({"ray": 1}, "ray must be True"),
        ({"ray": ["host"]}, "ray must be True"),
        ({"ray": True, "ray_workers": 0}, "ray_workers must be a whole number >= 1"),
        ({"ray": True, "ray_workers": True}, "ray_workers must be a whole number >= 1"),
        ({"ray_workers": 2}, "ray_workers applies to Ray runs only"),
        ({"ray": True, "concurrency": 0}, "concurrency must be a whole number >= 1"),
    ],
)
def test_item_7_wrong_ray_arguments_are_typed_errors_before_anything_runs(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(LLMConfigurationError, match=message):
        llmplex.batch(ROWS, **kwargs)

    async def main() -> None:
        await llmplex.abatch(ROWS, **kwargs)

    with pytest.raises(LLMConfigurationError, match=message):
        asyncio.run(main())


def test_item_7_ray_with_limits_counted_per_worker_is_refused_as_on_the_cli() -> None:
    client = llmplex.Client({"providers": {"mock": {"rate_limit": "5/minute"}}})
    with pytest.raises(LLMConfigurationError, match="memory://"):
        llmplex.batch(ROWS, ray=True, client=client)
