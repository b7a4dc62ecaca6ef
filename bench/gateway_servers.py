"""The processes ``bench/gateway.py`` measures: the stub, ``llmplex serve`` (or uvicorn on its app), the litellm proxy.

Each runs in its own process group (started with ``start_new_session``) and is
killed with it; ``cpu`` pins a process and everything it starts to one CPU
(set as it starts, before it forks any worker: they inherit it). ``rss_kib`` is
the resident memory of a process and its descendants, ``cpu_seconds`` their user + system CPU time, both read
from ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
MASTER_KEY = "sk-bench-gateway-master-0123456789"
LITELLM_MASTER_KEY = "sk-bench-litellm-master-0123456789"
UPSTREAM_KEY = "sk-bench-upstream-0123456789"
STUB_MODEL = "stub-model"


def event_observers() -> list[str]:
    """The ``llmplex_event`` observers a client in this environment loads (the gateway's too): a test plugin
    that observes events (the py env's ``llmplex-testplugins``) makes every call build its events, and the
    gateway measures slower than users would see it."""
    import llmplex

    client = llmplex.Client()
    client.host.load_observers(client.config.disabled)
    host = client.host
    return sorted({impl.plugin_name for impl in host.pm.hook.llmplex_event.get_hookimpls()})


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and every process under it (``/proc``: each counts all its threads)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{current}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()  # after the command's name: state is field 3
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15), in clock ticks
        pending += _children(current)
    return total / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    """Resident memory (KiB) of ``pid`` and every process under it."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError), open(f"/proc/{current}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        pending += _children(current)
    return total


class Server:
    """A server process; ``url`` is its root (``http://127.0.0.1:PORT``), ``stop()`` kills its process group."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], cpu: int | None, log: Path) -> None:
        self.name = name
        self.log = log
        with open(log, "w") as out:
            self.process = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(self.process.pid, {cpu})  # before it starts any worker: they inherit it
        self.url = ""

    def wait_ready(self, url: str, probe: str, timeout: float) -> Server:
        """Wait until ``GET url+probe`` answers 200 (or fail saying why, with the log's tail)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}): {self.tail()}")
            with contextlib.suppress(OSError), urllib.request.urlopen(url + probe, timeout=2) as answer:
                if answer.status == 200:
                    self.url = url
                    return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer {probe} within {timeout:.0f} s: {self.tail()}")

    def tail(self, lines: int = 15) -> str:
        """The last lines of its log."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def rss_kib(self) -> int:
        """Its resident memory with its workers (KiB)."""
        return rss_kib(self.process.pid)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds its process tree has used so far."""
        return cpu_seconds(self.process.pid)

    def pause(self) -> None:
        """Stop it (``SIGSTOP`` to its process group) while another target is measured: what it does in the
        background (the litellm proxy's tasks after a burst) must not land in another's figures."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let it run again (``SIGCONT``)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Kill it and everything it started."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def start_stub(work: Path, cpu: int | None) -> Server:
    """``bench/openai_stub_server.py`` (it prints its port)."""
    command = [sys.executable, str(HERE / "openai_stub_server.py"), "--lifetime", "3600"]
    stub = Server("the stub server", command, dict(os.environ), cpu, work / "stub.log")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = stub.log.read_text() if stub.log.exists() else ""
        if text.startswith("PORT "):
            stub.url = f"http://127.0.0.1:{text.split()[1]}"
            return stub
        if stub.process.poll() is not None:
            break
        time.sleep(0.05)
    stub.stop()
    raise RuntimeError(f"the stub server did not start: {stub.tail()}")


def gateway_environment(work: Path, stub_url: str) -> tuple[dict[str, str], Path]:
    """The environment and config file of a gateway in front of the stub (an ``openai-compatible`` instance)."""
    config = work / "gateway.toml"
    config.write_text(
        f"""
[providers.stub]
plugin = "openai-compatible"
base_url = "{stub_url}/v1"
api_key = "{UPSTREAM_KEY}"

[throttle]
max_attempts = 1

[gateway]
host = "127.0.0.1"
port = 0
database = "sqlite:///{work / "gateway.db"}"
"""
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")}
    env.update(
        XDG_CONFIG_HOME=str(work / "xdg-config"),
        XDG_DATA_HOME=str(work / "xdg-data"),
        LLMPLEX_CONFIG=str(config),
        LLMPLEX_MASTER_KEY=MASTER_KEY,
    )
    return env, config


def create_key(env: dict[str, str], config: Path) -> str:
    """A virtual key with no caps (``llmplex keys create``), as a service would hold."""
    command = [sys.executable, "-m", "llmplex", "--config", str(config), "keys", "create", "--name", "bench"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"llmplex keys create failed: {done.stderr.strip()}")
    return done.stdout.strip()


def start_gateway(work: Path, env: dict[str, str], config: Path, cpu: int | None, workers: int = 1) -> Server:
    """``llmplex serve`` (uvloop, httptools) with ``workers`` processes."""
    port = free_port()
    command = [sys.executable, "-m", "llmplex", "serve", "--config", str(config), "--port", str(port)]
    command += ["--workers", str(workers)]
    gateway = Server(f"llmplex serve ({workers} workers)", command, env, cpu, work / f"gateway-{workers}-{port}.log")
    return gateway.wait_ready(f"http://127.0.0.1:{port}", "/health/liveness", 60)


def start_uvicorn(work: Path, env: dict[str, str], cpu: int | None, loop: str, http: str) -> Server:
    """The same application as ``llmplex serve`` under uvicorn with another event loop and HTTP parser."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "llmplex.gateway.server:app_from_environment", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--loop", loop, "--http", http, "--no-access-log"]
    command += ["--log-level", "warning"]
    server = Server(f"uvicorn ({loop}, {http})", command, env, cpu, work / f"uvicorn-{loop}-{http}.log")
    return server.wait_ready(f"http://127.0.0.1:{port}", "/health/liveness", 60)


def start_bare(work: Path, stub_url: str, cpu: int | None) -> Server:
    """``bench/bare_proxy.py`` under uvicorn (uvloop, httptools, one worker) in front of the stub."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "bare_proxy:app", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning"]
    env = dict(os.environ, BARE_UPSTREAM=stub_url, BARE_KEY=UPSTREAM_KEY, PYTHONPATH=str(HERE))
    server = Server("the bare proxy", command, env, cpu, work / f"bare-{port}.log")
    return server.wait_ready(f"http://127.0.0.1:{port}", "/health", 60)


PROXY_VENV = Path(os.environ.get("LLMPLEX_LITELLM_PROXY_VENV", Path.home() / ".cache/llmplex/litellm-proxy"))
"""Where ``tools/ensure_services.sh`` installs ``litellm[proxy]`` in a venv of its own."""

INSTALL_PROXY = (
    f"install it with 'bash tools/ensure_services.sh' (a venv of its own at {PROXY_VENV}), "
    "or pip install 'litellm[proxy]' in this environment, or pass --litellm PATH"
)


def litellm_executable(given: str | None) -> Path:
    """The ``litellm`` proxy command: ``given``, else the venv of ``ensure_services.sh``, else beside Python."""
    candidates = [Path(given)] if given else [PROXY_VENV / "bin" / "litellm", Path(sys.executable).with_name("litellm")]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError(
        f"the litellm proxy is not installed (looked for {[str(c) for c in candidates]}): {INSTALL_PROXY}"
    )


def start_litellm(work: Path, stub_url: str, cpu: int | None, executable: Path) -> Server:
    """The litellm proxy (``litellm[proxy]``), one worker, no database, no spend logs, the local cost map; started,
    not waited for (``litellm_ready``)."""
    config = work / "litellm.yaml"
    config.write_text(
        f"""model_list:
  - model_name: {STUB_MODEL}
    litellm_params:
      model: openai/{STUB_MODEL}
      api_base: {stub_url}/v1
      api_key: {UPSTREAM_KEY}
litellm_settings:
  num_retries: 0
  request_timeout: 60
  telemetry: false
general_settings:
  master_key: {LITELLM_MASTER_KEY}
  disable_spend_logs: true
"""
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DIRECT_URL", "REDIS_URL")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_LOG="ERROR", LITELLM_MODE="PRODUCTION")
    port = free_port()
    command = [str(executable), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--num_workers", "1"]
    proxy = Server("the litellm proxy", command, env, cpu, work / "litellm.log")
    proxy.url = f"http://127.0.0.1:{port}"
    return proxy


def litellm_ready(proxy: Server, timeout: float) -> Server:
    """Wait for a proxy of ``start_litellm`` to answer its liveness probe (it starts in tens of seconds)."""
    try:
        return proxy.wait_ready(proxy.url, "/health/liveliness", timeout)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}\n(if a module is missing: {INSTALL_PROXY})") from None
