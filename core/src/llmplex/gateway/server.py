"""Running the gateway: uvicorn (uvloop, httptools) with TLS, workers, a graceful-shutdown deadline, JSON logs.

The HTTP protocol is httptools' with the request-head limits and the connection cap of
``[gateway]`` (``guard.head``): what they refuse never reaches the application.

``serve`` is what ``llmplex serve`` calls. It refuses to start without a master
key (``LLMPLEX_MASTER_KEY`` or ``LLMPLEX_MASTER_KEY_FILE``), prints the URL it
listens on once the socket is bound, and on SIGTERM or Ctrl-C stops taking
connections and gives the requests in flight ``shutdown_timeout`` seconds to
finish. Each worker process builds its application with ``app_from_environment``
from the same config file (``LLMPLEX_CONFIG``) and master key.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmplex.client import Client
from llmplex.config.schema import GatewayConfig
from llmplex.errors import LLMConfigurationError
from llmplex.gateway.keys.master_key import master_key

__all__ = ["JSONLogFormatter", "ServeOptions", "app_from_environment", "serve"]

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "color_message"}


_ENCODER = json.JSONEncoder(default=str)
"""``json.dumps(entry, default=str)`` builds this encoder anew on every call (every request's access line)."""

_MAX_SHAPES = 256
"""Sets of record attribute names a formatter remembers the extra fields of (then it starts again)."""


class JSONLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's ``extra`` fields."""

    _second: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text
    _extras: dict[tuple[str, ...], tuple[str, ...]]  # a record's attribute names -> its extra fields among them

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._extras = {}

    def _time(self, record: logging.LogRecord) -> str:
        """``formatTime(record, "%Y-%m-%dT%H:%M:%S")``, each second's text made once."""
        second = int(record.created)
        if self._second[0] != second:
            self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", self.converter(second)))
        return self._second[1]

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self._time(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        attributes = record.__dict__
        names = tuple(attributes)
        extras = self._extras.get(names)
        if extras is None:  # a new set of names (the access line's is always the same): its extras picked once
            extras = tuple(k for k in names if k not in _STANDARD and not k.startswith("_"))
            if len(self._extras) >= _MAX_SHAPES:
                self._extras.clear()
            self._extras[names] = extras
        for name in extras:
            entry[name] = attributes[name]
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return _ENCODER.encode(entry)


def _configure_logging() -> None:
    # no line of these logs shows a record's thread, process or task (``JSONLogFormatter``): not looked up per record
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    if sys.version_info >= (3, 12):
        logging.logAsyncioTasks = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLogFormatter())
    for name in ("llmplex.gateway", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False


GC_THRESHOLDS = (50_000, 20, 10)
"""The worker's garbage collector thresholds once it has started (Python's are 700, 10, 10)."""


def app_from_environment() -> Any:
    """The ASGI application of one worker: config from ``LLMPLEX_CONFIG`` and the environment, the master key,
    virtual keys and the spend log in the config's database (created or migrated here). Logs as ``serve`` does:
    a worker of ``--workers N`` is a new process, which ``serve``'s own set-up does not reach."""
    from llmplex.gateway.keyed import keyed_app

    _configure_logging()

    return _settling_heap(keyed_app(Client(), master_key()))


def _settling_heap(app: Any) -> Any:
    """``app``, whose start-up (plugins, SDK clients: the worker's warm-up) ends with its heap frozen and
    the collector's thresholds raised.

    With Python's thresholds the requests in flight (64 at once: hundreds of objects each) outlived the young
    collections, reached the oldest generation and soon made it collect in full: every few seconds the whole
    heap, about 160,000 objects after start-up (over 100 ms each), 9 % of the worker's CPU at 64 in flight.
    Frozen, what start-up made is never scanned again; with the thresholds raised, objects alive for one
    request's time are freed by their counts before a collection sees them.
    """
    started = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with started(application) as state:
            gc.collect()
            gc.freeze()
            gc.set_threshold(*GC_THRESHOLDS)
            yield state

    app.router.lifespan_context = lifespan
    return app


def _prepare_database(config: Any) -> None:
    """Create or migrate the keys and spend database once, before the workers start (each then finds it ready)."""
    from llmplex.gateway.keys.store import KeyStore, database_url

    KeyStore(database_url(config)).close()


@dataclass(frozen=True)
class ServeOptions:
    """What ``llmplex serve`` was told; ``None`` keeps the config's ``[gateway]`` value."""

    config_path: Path | None = None
    host: str | None = None
    port: int | None = None
    workers: int | None = None
    tls_certfile: str | None = None
    tls_keyfile: str | None = None

    def settings(self, configured: GatewayConfig) -> GatewayConfig:
        """The ``[gateway]`` settings with the command line's choices applied."""
        changes = {k: v for k, v in self.__dict__.items() if k != "config_path" and v is not None}
        try:
            return GatewayConfig.model_validate({**configured.model_dump(), **changes})
        except ValueError as exc:
            raise LLMConfigurationError(f"invalid llmplex serve option: {exc}") from None


def _url(settings: GatewayConfig, port: int) -> str:
    scheme = "https" if settings.tls_certfile else "http"
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"{scheme}://{host}:{port}"


def serve(options: ServeOptions, announce: Callable[[str], None] = print) -> None:
    """Run the gateway until it is stopped; ``announce`` gets the line naming the URL it listens on."""
    from llmplex.gateway.guard.head import GuardedConfig, GuardedHttpToolsProtocol, HeadLimits  # imports uvicorn

    master_key()  # refuse to start without one, before anything binds
    if options.config_path is not None:
        if not options.config_path.is_file():
            raise LLMConfigurationError(f"--config {str(options.config_path)!r} is not a file")
        os.environ["LLMPLEX_CONFIG"] = str(options.config_path.resolve())
    loaded = Client().config
    settings = options.settings(loaded.gateway)
    _prepare_database(loaded)
    for path in (settings.tls_certfile, settings.tls_keyfile):
        if path is not None and not Path(path).is_file():
            raise LLMConfigurationError(f"TLS file {path!r} does not exist; give PEM files for the certificate and key")
    _configure_logging()
    if settings.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="llmplex-metrics-")
    config = GuardedConfig(
        "llmplex.gateway.server:app_from_environment",
        head_limits=HeadLimits.of(settings),
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        loop="uvloop",
        http=GuardedHttpToolsProtocol,  # httptools, with the head limits and the connection cap of [gateway]
        ssl_certfile=settings.tls_certfile,
        ssl_keyfile=settings.tls_keyfile,
        timeout_graceful_shutdown=math.ceil(settings.shutdown_timeout),
        log_config=None,
        access_log=False,
        server_header=False,
        lifespan="on",
    )
    if settings.workers == 1:
        _announcing_server()(config, settings, announce).run()
        return
    from uvicorn.supervisors import Multiprocess

    sock = config.bind_socket()
    sock.listen(config.backlog)  # connections wait in the backlog until a worker is up, instead of being refused
    announce(f"llmplex gateway listening on {_url(settings, sock.getsockname()[1])} ({settings.workers} workers)")
    Multiprocess(config, sockets=[sock]).run()


def _announcing_server() -> type[Any]:
    import uvicorn

    class Announcing(uvicorn.Server):
        """A uvicorn server that announces its URL once bound (the real port when 0 was asked for)."""

        def __init__(self, config: Any, settings: GatewayConfig, announce: Callable[[str], None]) -> None:
            super().__init__(config)
            self._settings = settings
            self._announce = announce

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                port = self.servers[0].sockets[0].getsockname()[1] if self.servers else self._settings.port
                self._announce(f"llmplex gateway listening on {_url(self._settings, port)}")

    return Announcing
