"""Start, reuse and stop llama.cpp server processes on 127.0.0.1.

`LocalServer.for_model` gives every caller in a process the same server for
one model: a running persistent server for that model if there is one,
otherwise a child process owned by this interpreter and stopped at its exit.
`start_persistent`, `stop_persistent` and `status` back ``llmplex local
start|stop|status``: a server that outlives the command, recorded in a state
file in the cache directory.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, Literal

from .errors import LocalModelError
from .model_files import DEFAULT_MODEL, cache_dir, file_lock, resolve_model
from .serve import DEFAULT_N_CTX

DEFAULT_START_TIMEOUT = 120.0
"""Seconds to wait for a server to load its model and answer /health."""

_STOP_TIMEOUT = 5.0
_HOST = "127.0.0.1"
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_Key = tuple[Path, Path | None, str | None]
"""A server's identity in a process: model file, vision projector, embedding pooling (``None``: chat)."""
_PERSISTENT_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
"""Persistent servers started by this interpreter, kept so they can be reaped."""


def _state_file() -> Path:
    return cache_dir() / "local-server.json"


def _logs_dir() -> Path:
    return cache_dir() / "logs"


class LocalServer:
    """A llama.cpp HTTP server for one GGUF file, listening on 127.0.0.1."""

    _registry: ClassVar[dict[_Key, LocalServer]] = {}
    _start_locks: ClassVar[dict[_Key, threading.Lock]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        model_path: Path,
        pid: int,
        port: int,
        log_path: Path,
        process: subprocess.Popen[bytes] | None = None,
        mmproj: Path | None = None,
        pooling: str | None = None,
    ) -> None:
        self.model_path = model_path
        self.mmproj = mmproj
        self.pooling = pooling
        """``None`` for a chat server; for an embedding server, its ``--pooling`` (``model``, ``mean``...)."""
        self.pid = pid
        self.port = port
        self.log_path = log_path
        self._process = process

    def __repr__(self) -> str:
        kind = "owned" if self.owned else "persistent"
        return f"LocalServer({kind}, pid={self.pid}, url={self.base_url!r}, model={str(self.model_path)!r})"

    @property
    def base_url(self) -> str:
        """Root URL, e.g. ``http://127.0.0.1:8080`` (Anthropic ``/v1/messages`` lives here)."""
        return f"http://{_HOST}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI SDK clients: ``<base_url>/v1``."""
        return f"{self.base_url}/v1"

    @property
    def owned(self) -> bool:
        """True when this interpreter started the server and stops it at exit."""
        return self._process is not None

    @classmethod
    def for_model(
        cls,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        mmproj: Path | None = None,
        pooling: str | None = None,
    ) -> LocalServer:
        """Return the running server for `model`, starting one if needed.

        Thread-safe; one server per model path (and vision projector, and
        mode) per process. `n_ctx` applies only when a server is started
        here. With `mmproj` (the model's multimodal projector GGUF) the server
        reads images; with `pooling` (see `serve.POOLING_CHOICES`) it is an
        embedding server (``/v1/embeddings``), separate from the model's chat
        server. A persistent server (chat, no projector) is reused only for chat.
        """
        model_path = resolve_model(model)
        mmproj = None if mmproj is None else mmproj.expanduser().resolve()
        key = (model_path, mmproj, pooling)
        with cls._registry_lock:
            start_lock = cls._start_locks.setdefault(key, threading.Lock())
        with start_lock:
            current = cls._registry.get(key)
            if current is not None and current.is_alive():
                return current
            if current is not None:
                current.stop()
            persistent = None if mmproj or pooling else _persistent_server_for(model_path)
            server = persistent or _start_owned(
                model_path, n_ctx=n_ctx, timeout=start_timeout, mmproj=mmproj, pooling=pooling
            )
            with cls._registry_lock:
                cls._registry[key] = server
            return server

    def is_alive(self) -> bool:
        """Whether the process runs and answers /health."""
        if self._process is not None and self._process.poll() is not None:
            return False
        return _pid_alive(self.pid) and _healthy(self.port)

    def stop(self) -> None:
        """Stop the server if this interpreter owns it; else just forget it."""
        key = (self.model_path, self.mmproj, self.pooling)
        with self._registry_lock:
            if self._registry.get(key) is self:
                del self._registry[key]
        if self._process is not None:
            _terminate(self.pid, self._process)

    @classmethod
    def stop_all(cls) -> None:
        """Stop every server this interpreter owns (registered with atexit)."""
        with cls._registry_lock:
            servers = list(cls._registry.values())
        for server in servers:
            server.stop()


atexit.register(LocalServer.stop_all)


@dataclass(frozen=True)
class PersistentStatus:
    """The persistent server as recorded in the state file, and whether it answers.

    `state` is ``running`` (answers /health), ``stale`` (recorded but not
    answering: dead or hung) or ``stopped`` (none recorded). After
    `stop_persistent` the fields describe the server that was stopped, if any.
    `detail` is a one-line human-readable summary.
    """

    state: Literal["running", "stale", "stopped"]
    detail: str
    pid: int | None = None
    port: int | None = None
    model_path: Path | None = None
    log_path: Path | None = None

    @property
    def base_url(self) -> str | None:
        """Root URL of the server, when one is recorded."""
        return None if self.port is None else f"http://{_HOST}:{self.port}"


def status() -> PersistentStatus:
    """Report the persistent server: running, stale or stopped."""
    record = _read_state()
    if record is None:
        return PersistentStatus("stopped", "no persistent local server is running")
    pid, port, model_path, log_path = record
    recorded = PersistentStatus("stale", "", pid, port, model_path, log_path)
    if _pid_alive(pid) and _healthy(port):
        detail = f"running: pid {pid} on http://{_HOST}:{port} serving {model_path}"
        return replace(recorded, state="running", detail=detail)
    why = "is not answering" if _pid_alive(pid) else "is gone"
    detail = f"stale: pid {pid} {why} (log: {log_path}); `llmplex local stop` cleans up"
    return replace(recorded, detail=detail)


def start_persistent(
    model: str | os.PathLike[str] = DEFAULT_MODEL,
    *,
    n_ctx: int = DEFAULT_N_CTX,
    timeout: float = DEFAULT_START_TIMEOUT,
) -> PersistentStatus:
    """Start a server that outlives this process, or report the one running.

    Raises `LocalModelError` when a persistent server for another model is
    running, or when the server fails to start.
    """
    model_path = resolve_model(model)
    with file_lock(_state_file().with_suffix(".lock")):
        current = status()
        if current.state == "running":
            if current.model_path != model_path:
                raise LocalModelError(
                    f"a persistent local server already serves {current.model_path} "
                    f"(pid {current.pid}); run `llmplex local stop` first"
                )
            return replace(current, detail="already " + current.detail)
        if current.state == "stale":
            _stop_recorded(current)
        log_path = _logs_dir() / "persistent.log"
        process, port = _spawn(model_path, log_path, n_ctx=n_ctx, parent_pid=None, timeout=timeout)
        _write_state(process.pid, port, model_path, log_path)
        _PERSISTENT_CHILDREN[process.pid] = process
        return PersistentStatus(
            "running",
            f"started: pid {process.pid} on http://{_HOST}:{port} serving {model_path}",
            pid=process.pid,
            port=port,
            model_path=model_path,
            log_path=log_path,
        )


def stop_persistent() -> PersistentStatus:
    """Stop the persistent server (running or stale) and remove its state file."""
    with file_lock(_state_file().with_suffix(".lock")):
        current = status()
        if current.state == "stopped":
            return current
        _stop_recorded(current)
        detail = f"stopped: pid {current.pid} serving {current.model_path}"
        return replace(current, state="stopped", detail=detail)


def _stop_recorded(current: PersistentStatus) -> None:
    """End the recorded server if it is ours, then drop the state file."""
    pid, port = current.pid, current.port
    if pid is not None and port is not None and _is_our_server(pid, port):
        _terminate(pid, _PERSISTENT_CHILDREN.pop(pid, None))
    _state_file().unlink(missing_ok=True)


def _persistent_server_for(model_path: Path) -> LocalServer | None:
    record = _read_state()
    if record is None:
        return None
    pid, port, recorded_model, log_path = record
    if recorded_model != model_path or not (_pid_alive(pid) and _healthy(port)):
        return None
    return LocalServer(model_path, pid, port, log_path)


def _start_owned(
    model_path: Path, *, n_ctx: int, timeout: float, mmproj: Path | None = None, pooling: str | None = None
) -> LocalServer:
    mode = "" if pooling is None else "-embedding"
    log_path = _logs_dir() / f"server-{os.getpid()}-{model_path.stem}{mode}.log"
    process, port = _spawn(
        model_path, log_path, n_ctx=n_ctx, parent_pid=os.getpid(), timeout=timeout, mmproj=mmproj, pooling=pooling
    )
    return LocalServer(model_path, process.pid, port, log_path, process, mmproj, pooling)


def serve_command(
    model_path: Path,
    ready_file: Path,
    *,
    n_ctx: int,
    parent_pid: int | None,
    mmproj: Path | None = None,
    pooling: str | None = None,
) -> list[str]:
    """The child's command line: ``python -m llmplex_llamacpp.serve`` for chat, or embeddings with `pooling`."""
    command = [
        sys.executable,
        "-m",
        "llmplex_llamacpp.serve",
        "--model",
        str(model_path),
        "--ready-file",
        str(ready_file),
        "--n-ctx",
        str(n_ctx),
    ]
    if parent_pid is not None:
        command += ["--parent-pid", str(parent_pid)]
    if mmproj is not None:
        command += ["--mmproj", str(mmproj)]
    if pooling is not None:
        command += ["--embedding", "--pooling", pooling]
    return command


def _spawn(
    model_path: Path,
    log_path: Path,
    *,
    n_ctx: int,
    parent_pid: int | None,
    timeout: float,
    mmproj: Path | None = None,
    pooling: str | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """Run ``llmplex_llamacpp.serve`` in its own process group; wait until healthy."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    ready_file = log_path.parent / f".ready-{uuid.uuid4().hex}.json"
    command = serve_command(model_path, ready_file, n_ctx=n_ctx, parent_pid=parent_pid, mmproj=mmproj, pooling=pooling)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        port = _wait_ready(process, ready_file, log_path, model_path, timeout)
    except BaseException:
        _terminate(process.pid, process)
        raise
    finally:
        ready_file.unlink(missing_ok=True)
    return process, port


def _wait_ready(
    process: subprocess.Popen[bytes],
    ready_file: Path,
    log_path: Path,
    model_path: Path,
    timeout: float,
) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = process.poll()
        if code is not None:
            raise LocalModelError(
                f"the llama.cpp server for {model_path} exited with code {code} "
                f"before it was ready; see its log {log_path}:\n{_log_tail(log_path)}"
            )
        if ready_file.exists():
            port = int(json.loads(ready_file.read_text(encoding="utf-8"))["port"])
            if _healthy(port):
                return port
        time.sleep(0.05)
    raise LocalModelError(
        f"the llama.cpp server for {model_path} was not ready after {timeout:.0f} s "
        f"and was killed; see its log {log_path}"
    )


def _log_tail(log_path: Path, lines: int = 15) -> str:
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(log unreadable)"
    return "\n".join(text.splitlines()[-lines:])


def _healthy(port: int) -> bool:
    url = f"http://{_HOST}:{port}/health"
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _pid_alive(pid: int) -> bool:
    """Whether `pid` runs (a reaped-late zombie child of ours counts as gone)."""
    if sys.platform != "win32":
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """Whether `pid` died but its parent has not reaped it (known on Linux only)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] == "Z"


def _is_our_server(pid: int, port: int) -> bool:
    """Whether `pid` is a server we started, not a process that reused the pid."""
    if not _pid_alive(pid):
        return False
    if _healthy(port):
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"llmplex_llamacpp.serve" in cmdline


def _terminate(pid: int, process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM the server's process group, SIGKILL it if it lingers; reap it."""
    for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        _signal_group(pid, sig)
        if _wait_gone(pid, process, _STOP_TIMEOUT):
            return
    raise LocalModelError(f"could not stop the llama.cpp server (pid {pid})")


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def _wait_gone(pid: int, process: subprocess.Popen[bytes] | None, timeout: float) -> bool:
    if process is not None:
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _read_state() -> tuple[int, int, Path, Path] | None:
    try:
        data = json.loads(_state_file().read_text(encoding="utf-8"))
        return (
            int(data["pid"]),
            int(data["port"]),
            Path(data["model_path"]),
            Path(data["log_path"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LocalModelError(
            f"the local server state file {_state_file()} is unreadable ({exc}); "
            "delete it and stop any leftover server by hand"
        ) from exc


def _write_state(pid: int, port: int, model_path: Path, log_path: Path) -> None:
    path = _state_file()
    record = {
        "pid": pid,
        "port": port,
        "model_path": str(model_path),
        "log_path": str(log_path),
    }
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(record), encoding="utf-8")
    os.replace(partial, path)
