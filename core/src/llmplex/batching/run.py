"""``abatch``/``batch``: run many ``complete`` calls with bounded concurrency, results in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from llmplex import process_client
from llmplex.batching.items import complete_item, settle, split_item
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.types import Response

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = [
    "DEFAULT_CONCURRENCY",
    "BatchResult",
    "abatch",
    "batch",
    "checked_concurrency",
    "complete_item",
    "settle",
    "split_item",
]

BatchResult = Response | LLMError
DEFAULT_CONCURRENCY = 32


def checked_concurrency(concurrency: Any) -> int:
    """``concurrency`` when it is a whole number >= 1; raises LLMConfigurationError otherwise."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise LLMConfigurationError(f"concurrency must be a whole number >= 1, got {concurrency!r}")
    return concurrency


async def abatch(
    requests: Iterable[Mapping[str, Any]],
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    client: Client | None = None,
    on_result: Callable[[int, BatchResult], None] | None = None,
    ray: bool | str | None = None,
    ray_workers: int | None = None,
) -> list[BatchResult]:
    """Run every request; return a Response or an LLMError for each, in request order.

    Each request is a dict of [`complete()`][llmplex.complete] arguments:
    ``{"model": "openai:gpt-4o-mini", "prompt": "hi", "temperature": 0}``. At most
    ``concurrency`` requests are in flight at once. ``on_result(index, result)``
    is called as each one finishes (for progress or a journal).

    ``ray=True`` runs the requests on the worker processes of a Ray instance started
    on this machine for the run, ``ray="HOST:6379"`` (or ``"ray://HOST:10001"``,
    ``"auto"``) on a running cluster, as ``llmplex batch --ray`` does (``llmplex[ray]``;
    ``ray_workers`` worker processes, default one per CPU). The requests must then be
    JSON data (no Python objects such as tool handlers); an error comes back as its
    type, message, ``retryable`` and ``attempts``.
    """
    checked_concurrency(concurrency)
    if client is None:
        client = process_client.shared()
    items = list(requests)
    address = _ray_address(ray, ray_workers)
    if address is not None:
        from llmplex.reliability.guard import in_worker

        return await in_worker(lambda: _on_ray(client, items, address, concurrency, ray_workers, on_result))
    results: list[BatchResult | None] = [None] * len(items)
    queue = iter(enumerate(items))

    async def worker() -> None:
        for index, item in queue:
            result = await settle(complete_item(client, item))
            results[index] = result
            if on_result is not None:
                on_result(index, result)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(items))):
            group.create_task(worker())
    return cast("list[BatchResult]", results)  # every worker filled its indexes


def batch(
    requests: Iterable[Mapping[str, Any]],
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    client: Client | None = None,
    on_result: Callable[[int, BatchResult], None] | None = None,
    ray: bool | str | None = None,
    ray_workers: int | None = None,
) -> list[BatchResult]:
    """[`abatch()`][llmplex.abatch] for sync code (code that is not already running an event loop);
    ``ray=True`` or ``ray="ADDRESS"`` runs it on Ray (see ``abatch``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        checked_concurrency(concurrency)
        address = _ray_address(ray, ray_workers)
        if address is not None:
            items = list(requests)
            return _on_ray(client or process_client.shared(), items, address, concurrency, ray_workers, on_result)
        return asyncio.run(abatch(requests, concurrency, client=client, on_result=on_result))
    raise LLMConfigurationError("batch() was called inside a running event loop; use 'await abatch(...)' there")


def _ray_address(ray: Any, workers: Any) -> str | None:
    """The Ray address ``ray=`` asks for (``True``: a local instance), or ``None``; wrong values are refused."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise LLMConfigurationError(f"ray_workers must be a whole number >= 1, got {workers!r}")
    if ray is None or ray is False:
        if workers is not None:
            raise LLMConfigurationError("ray_workers applies to Ray runs only: add ray=True or ray='HOST:6379'")
        return None
    if ray is True:
        from llmplex.batching.ray_run import LOCAL

        return LOCAL
    if isinstance(ray, str) and ray.strip():
        return ray.strip()
    raise LLMConfigurationError(
        f"ray must be True (a local Ray instance for the run), the address of a cluster ('HOST:6379', "
        f"'ray://HOST:10001', 'auto'), or None, got {ray!r}"
    )


def _on_ray(
    client: Client,
    items: list[Mapping[str, Any]],
    address: str,
    concurrency: int,
    workers: int | None,
    on_result: Callable[[int, BatchResult], None] | None,
) -> list[BatchResult]:
    """Every request answered by Ray workers, in request order (``llmplex.batching.ray_run``)."""
    from llmplex.batching.ray_run import RayRun
    from llmplex.batching.records import from_record

    results: list[BatchResult | None] = [None] * len(items)

    def arrived(index: int, record: dict[str, Any]) -> None:
        result = results[index] = from_record(record)
        if on_result is not None:
            on_result(index, result)

    rows = []
    for index, item in enumerate(items):
        try:
            split_item(item)  # refused here as on the CLI: the row fails in place, nothing is sent
            rows.append((index, item))
        except LLMError as error:
            arrived(index, {"ok": False, "error": {"type": type(error).__name__, "message": str(error)}})
    RayRun(client, address, concurrency=concurrency, workers=workers).run(rows, arrived)
    return cast("list[BatchResult]", results)
