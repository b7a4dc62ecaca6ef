"""Run batch rows on a Ray cluster (``llmplex batch --ray``): Ray workers answer, this process journals.

The driver (this process) keeps every row's order and the journal: it sends
rows to ``RowWorker`` actors, at most
``concurrency`` at a time across the cluster, and hands each record to
``on_record`` as it arrives. A worker process that dies fails only the rows it
was running; they are sent again (to the restarted worker) up to the throttle
policy's ``max_attempts``, then reported in place. Ray is imported only here,
only when a run starts.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmplex.batching.records import result_record
from llmplex.config.schema import Config
from llmplex.errors import LLMConfigurationError, LLMConnectionError, LLMError

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = ["LOCAL", "RayRun", "check_shared_storage", "provider_environment"]

LOCAL = "local"
"""The address that starts a Ray instance on this machine for the run (``--ray`` without an address)."""
CLOSE_SECONDS = 10.0
"""How long the workers get, at the end of a run, to close their clients before they are killed."""

_RAY_MISSING = (
    "--ray needs Ray: install the llmplex[ray] extra (in a clone: pip install './core[ray]'), "
    "or pip install 'ray>=2.10'"
)
_RAY_CLIENT_MISSING = (
    "--ray {address} connects through Ray Client (a ray:// address), which needs Ray's client extra: install "
    "llmplex[ray-client] (in a clone: pip install './core[ray-client]'), or pip install 'ray[client]>=2.10'; "
    "or, on a machine of the cluster, give the head's HOST:6379 instead"
)
_LOCAL_ENVIRONMENT = {
    "RAY_USAGE_STATS_ENABLED": "0",  # a cluster started for one run reports nothing anywhere
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # makes Ray keep 127.0.0.1 instead of the host's address
}


def check_shared_storage(config: Config) -> None:
    """Refuse a Ray run whose rate limits or budget would be counted once per worker process.

    With ``[limits] storage = "memory://"`` every worker keeps its own windows and
    budget, so N workers would send N times the limit.
    """
    if config.limits.storage.get_secret_value().partition("://")[0] != "memory":
        return
    limited = [
        f"providers.{prefix}.{key}"
        for prefix, table in config.providers.items()
        for key in ("rate_limit", "token_rate_limit")
        if table.get(key) is not None
    ]
    if config.budget is not None:
        limited.append("[budget]")
    if limited:
        raise LLMConfigurationError(
            f'--ray runs the rows in several worker processes, and with [limits] storage = "memory://" each '
            f"would count {', '.join(limited)} on its own (N workers would send N times the limit): set "
            '[limits] storage = "redis://HOST:6379/0" to a Redis every Ray node reaches (llmplex[redis]), '
            "or remove those limits"
        )


def provider_environment(client: Client, models: Iterable[Any]) -> dict[str, str]:
    """The environment variables (API keys, base URLs) that the providers of ``models`` read, with their values.

    ``models`` are the rows' models (``None``: the default model); fallback models
    count too. A model that does not route is skipped: its row fails in place.
    """
    given = list(models)
    wanted = {m for m in given if isinstance(m, str)}  # any other value fails its row in place
    if any(m is None for m in given):
        wanted.add(client.config.default_model)
    wanted.update(m for chain in client.config.fallbacks.values() for m in chain)
    names = {"LLMPLEX_CACHE_DIR"}
    for model in wanted:
        try:
            route = client.route(model)
        except LLMError:
            continue
        names.update(n for ns in route.provider.info.settings_model.env_vars.values() for n in ns)
    return {name: os.environ[name] for name in sorted(names) if os.environ.get(name)}


@dataclass
class _Row:
    index: int
    arguments: Mapping[str, Any]
    attempt: int = 1


class RayRun:
    """One batch run on Ray: ``run`` sends ``rows`` (index, complete() arguments) and reports each record."""

    def __init__(
        self,
        client: Client,
        address: str,
        *,
        concurrency: int,
        workers: int | None = None,
        max_attempts: int | None = None,
    ) -> None:
        check_shared_storage(client.config)
        if importlib.util.find_spec("ray") is None:
            raise LLMConfigurationError(_RAY_MISSING)
        self.client = client
        self.address = address
        self.concurrency = concurrency
        self.workers = workers
        self.max_attempts = max_attempts or client.config.throttle.max_attempts
        self._ray: Any = None
        self._started = False

    def connect(self) -> None:
        """Join the cluster (or start the local instance) now, before anything is journaled or sent."""
        if self._ray is None:
            self._ray, self._started = _connect(self.address)

    def run(
        self, rows: Iterable[tuple[int, Mapping[str, Any]]], on_record: Callable[[int, dict[str, Any]], None]
    ) -> None:
        """Answer every row on the cluster; ``on_record(index, record)`` as each one finishes (in this process)."""
        self.connect()
        ray = self._ray
        workers: _Workers | None = None
        try:
            queue = deque(_Row(index, arguments) for index, arguments in rows)
            if queue:
                environment = provider_environment(self.client, [r.arguments.get("model") for r in queue])
                workers = self._start_workers(ray, environment, len(queue))
                self._drive(ray, workers, queue, on_record)
        finally:
            if workers is not None:
                workers.stop()
            if self._started:
                ray.shutdown()
                self._ray, self._started = None, False

    def _start_workers(self, ray: Any, environment: dict[str, str], rows: int) -> _Workers:
        from llmplex.batching.ray_worker import RowWorker

        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(RowWorker).options(
            num_cpus=0,  # I/O-bound: workers are placed by SPREAD, not by the CPUs they would reserve
            scheduling_strategy="SPREAD",
            max_concurrency=self.concurrency,
            max_restarts=0,  # a worker that dies is replaced by _Workers, which keeps its arguments alive
            max_task_retries=0,
        )
        # as objects in the object store, resolved in each worker: never in a runtime env, the dashboard or a log
        arguments = (ray.put(self.client.config), ray.put(environment))
        return _Workers(ray, remote, arguments, min(count, self.concurrency, rows))

    def _drive(
        self, ray: Any, workers: _Workers, queue: deque[_Row], on_record: Callable[[int, dict[str, Any]], None]
    ) -> None:
        in_flight: dict[Any, tuple[_Row, int, Any]] = {}
        while queue or in_flight:
            while queue and len(in_flight) < self.concurrency:
                row = queue.popleft()
                ref, slot, actor = workers.send(row.arguments)
                in_flight[ref] = (row, slot, actor)
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                row, slot, actor = in_flight.pop(ref)
                workers.done(slot)
                record, lost = self._record(ray, ref, row)
                if lost:  # its worker died: a new one takes the slot
                    workers.replace(slot, actor)
                if record is None:  # and the row goes again
                    row.attempt += 1
                    queue.append(row)
                else:
                    on_record(row.index, record)

    def _record(self, ray: Any, ref: Any, row: _Row) -> tuple[dict[str, Any] | None, bool]:
        """The row's record (``None``: send it again) and whether its worker died."""
        from ray.exceptions import RayError, RayTaskError

        try:
            return ray.get(ref), False
        except RayTaskError as exc:  # the row's code raised past the worker's own handling (a BaseException)
            error = LLMError(f"the request failed on its Ray worker: {type(exc.cause).__name__}", attempts=row.attempt)
            return result_record(error), False
        except RayError as exc:
            if row.attempt < self.max_attempts:
                return None, True
            return result_record(_worker_lost(exc, row.attempt)), True


class _Workers:
    """The run's worker actors, one per slot, and how many rows each is running."""

    def __init__(self, ray: Any, remote: Any, arguments: tuple[Any, Any], count: int) -> None:
        self._ray = ray
        self._remote = remote
        self._arguments = arguments
        self.actors = [remote.remote(*arguments) for _ in range(count)]
        self._load = [0] * count

    def send(self, arguments: Mapping[str, Any]) -> tuple[Any, int, Any]:
        """Start one row on the least busy worker: its result reference, slot and actor."""
        slot = self._load.index(min(self._load))
        self._load[slot] += 1
        actor = self.actors[slot]
        return actor.run.remote(arguments), slot, actor

    def done(self, slot: int) -> None:
        self._load[slot] -= 1

    def replace(self, slot: int, dead: Any) -> None:
        """A new worker in ``slot``, unless the dead one was replaced already (by another of its rows)."""
        if self.actors[slot] is dead:
            self._ray.kill(dead, no_restart=True)
            self.actors[slot] = self._remote.remote(*self._arguments)

    def stop(self) -> None:
        """Let each worker close its client (its HTTP sessions would be left open: "Unclosed client session"
        in the Ray logs), for at most ``CLOSE_SECONDS``, then kill it."""
        with contextlib.suppress(Exception):  # a dead or stuck worker is killed all the same
            closing = [actor.close.remote() for actor in self.actors]
            self._ray.wait(closing, num_returns=len(closing), timeout=CLOSE_SECONDS)
        for actor in self.actors:
            self._ray.kill(actor, no_restart=True)


def _worker_lost(exc: BaseException, attempts: int) -> LLMError:
    error = LLMError(
        f"the Ray worker running this request died ({type(exc).__name__}), {attempts} times; the process may "
        "have crashed or run out of memory: see the Ray logs of the node, then run the batch again with --resume",
        attempts=attempts,
    )
    error.retryable = True
    return error


def _connect(address: str) -> tuple[Any, bool]:
    """Ray, connected to ``address`` (``local``: a new instance on this machine); whether this run started it.

    A Ray already initialised in this process (a notebook, a test) is used as it is.
    """
    if address == LOCAL:
        for name, value in _LOCAL_ENVIRONMENT.items():
            os.environ.setdefault(name, value)
    try:
        import ray
    except ImportError:
        raise LLMConfigurationError(_RAY_MISSING) from None
    _check_client_address(address)
    if ray.is_initialized():
        return ray, False
    options: dict[str, Any] = {"include_dashboard": False, "configure_logging": False}
    if address == LOCAL:
        options["_node_ip_address"] = "127.0.0.1"
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except Exception as exc:  # Ray raises assorted types (ConnectionError, RuntimeError, its own)
        where = "start a local Ray instance" if address == LOCAL else f"reach the Ray cluster at {address!r}"
        raise LLMConnectionError(
            f"cannot {where}: {type(exc).__name__}: {exc}; give the address of a running head node "
            "(HOST:6379, or ray://HOST:10001 for Ray Client), or --ray alone for a local instance"
        ) from None
    return ray, True


def _check_client_address(address: str) -> None:
    """A ``ray://HOST:PORT`` address needs Ray Client (gRPC), which plain ``ray`` does not install."""
    if not address.startswith("ray://"):
        return
    if not address.removeprefix("ray://").strip("/"):
        raise LLMConfigurationError(f"--ray {address!r} names no host: give ray://HOST:10001 (Ray Client's port)")
    if importlib.util.find_spec("grpc") is None:
        raise LLMConfigurationError(_RAY_CLIENT_MISSING.format(address=address))
