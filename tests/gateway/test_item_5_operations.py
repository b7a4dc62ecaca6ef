"""Issue 22 item 5: health, metrics, the overhead header, the body limit, and ``llmplex serve`` as a process
(master key, printed URL, TLS, structured logs without secrets, graceful shutdown)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, Gateway, gateway_config, running_gateway
from tests.support.fault_server import FaultServer
from tests.support.faults import Fault
from tests.support.fixtures import redis_server, redis_session
from tests.support.redis_server import RedisServer

__all__ = ["redis_server", "redis_session"]  # fixtures

AUTH = {"authorization": f"Bearer {MASTER_KEY}"}
HELLO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}


def test_item_5_liveness_and_readiness_need_no_key(gateway: Gateway) -> None:
    assert httpx.get(gateway.url + "/health/liveness").json() == {"status": "ok"}
    assert httpx.get(gateway.url + "/health/readiness").json() == {"status": "ready"}


def test_item_5_readiness_checks_the_limits_redis(fault_server: FaultServer, redis_server: RedisServer) -> None:
    with running_gateway(gateway_config(fault_server, limits={"storage": redis_server.url})) as up:
        assert httpx.get(up.url + "/health/readiness").status_code == 200
    with running_gateway(gateway_config(fault_server, limits={"storage": "redis://127.0.0.1:1/0"})) as down:
        reply = httpx.get(down.url + "/health/readiness", timeout=10)
        assert reply.status_code == 503
        assert "redis" in reply.json()["problems"]["redis"]
        assert httpx.get(down.url + "/health/liveness").status_code == 200


def test_item_5_readiness_checks_the_database(fault_server: FaultServer, tmp_path: Path) -> None:
    ready = gateway_config(fault_server, gateway={"database": f"sqlite:///{tmp_path / 'gw.db'}"})
    with running_gateway(ready) as up:
        assert httpx.get(up.url + "/health/readiness", timeout=10).status_code == 200
    gone = gateway_config(fault_server, gateway={"database": "postgresql://llmplex:secret-pw@127.0.0.1:1/none"})
    with running_gateway(gone) as down:
        reply = httpx.get(down.url + "/health/readiness", timeout=10)
    assert reply.status_code == 503 and "does not answer" in reply.json()["problems"]["database"]
    assert "secret-pw" not in reply.text


def test_item_5_metrics_count_requests_errors_tokens_cost_latency_in_flight(
    gateway: Gateway, fault_server: FaultServer
) -> None:
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
    client.chat.completions.create(**HELLO)  # type: ignore[call-overload]
    fault_server.enqueue(Fault.rate_limit(retry_after=1), Fault.ok(text="priced"))
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="faulty:gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
    client.chat.completions.create(model="faulty:gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
    text = httpx.get(gateway.url + "/metrics").text
    assert (
        'llmplex_gateway_requests_total{endpoint="chat.completions",key="master",model="mock:echo",provider="mock",'
        'status="200"} 1.0' in text
    )
    # faulty:gpt-4o-mini is named nowhere in the config: its model label is "other" (issue 31 item 2)
    errors = 'llmplex_gateway_errors_total{endpoint="chat.completions",key="master",model="other",provider="faulty",'
    assert errors + 'type="rate_limit"} 1.0' in text
    assert 'llmplex_gateway_tokens_total{key="master",kind="input",model="mock:echo",provider="mock"} 1.0' in text
    assert 'llmplex_gateway_cost_usd_total{key="master",model="other",provider="faulty"}' in text  # it has a price
    assert (
        'llmplex_gateway_request_latency_seconds_bucket{endpoint="chat.completions",le="0.005",model="mock:echo"}'
        in text
    )
    assert "llmplex_gateway_in_flight" in text and "llmplex_gateway_overhead_seconds_bucket" in text
    assert MASTER_KEY not in text and PROVIDER_KEY not in text


def test_item_5_every_answer_carries_the_overhead_header(gateway: Gateway) -> None:
    with httpx.Client(base_url=gateway.url, headers=AUTH) as http:
        answers = [
            http.post("/v1/chat/completions", json=HELLO),
            http.post("/v1/chat/completions", json={**HELLO, "stream": True}),
            http.post("/v1/chat/completions", content=b"not json"),
            http.post("/v1/messages", json={}, headers={"x-api-key": "wrong"}),
            http.get("/health/liveness"),
            http.get("/metrics"),
            http.get("/v1/nothing-here"),
        ]
    for answer in answers:
        overhead = float(answer.headers["x-llmplex-overhead-ms"])
        assert 0 <= overhead < 1000, answer
    assert answers[-1].status_code == 404 and answers[-1].json()["error"]["type"] == "invalid_request_error"


def test_item_5_bodies_over_the_limit_get_413_in_each_apis_shape(fault_server: FaultServer) -> None:
    big = {**HELLO, "messages": [{"role": "user", "content": "x" * 5000}]}
    with running_gateway(gateway_config(fault_server, gateway={"max_body_bytes": 4096})) as small:
        with httpx.Client(base_url=small.url, headers=AUTH) as http:
            declared = http.post("/v1/chat/completions", json=big)
            chunked = http.post("/v1/messages", content=iter([json.dumps(big).encode()]))  # no content-length
            fine = http.post("/v1/chat/completions", json=HELLO)
        assert declared.status_code == 413 and declared.json()["error"]["message"].startswith("the request body is")
        assert chunked.status_code == 413 and chunked.json()["error"]["type"] == "request_too_large"
        assert fine.status_code == 200
        assert small.mock.calls == [small.mock.calls[0]]  # only the request within the limit reached the provider


# -- llmplex serve, a real process --------------------------------------------------------------------------------


def _write_config(path: Path, fault_server: FaultServer, extra: str = "") -> Path:
    path.write_text(
        f"""
[providers.faulty]
plugin = "openai"
base_url = "{fault_server.url}"
api = "chat"
api_key = "{PROVIDER_KEY}"

[throttle]
max_attempts = 1

[gateway]
port = 0
shutdown_timeout = 10
{extra}
"""
    )
    return path


def _environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg"), XDG_DATA_HOME=str(tmp_path / "data"), LLMPLEX_CONFIG="")
    env.update(extra)
    return env


@contextmanager
def _serve(args: list[str], env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "llmplex", "serve", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the workers are killed with it
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the URL is printed (or the process ends)
        if "listening on" not in line:
            process.kill()
            raise AssertionError(f"llmplex serve printed {line!r}; stderr: {process.communicate()[1]}")
        yield process, line.split("listening on ", 1)[1].split()[0]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the server and any worker it started
        process.communicate(timeout=30)


def test_item_5_serve_refuses_to_start_without_a_master_key(tmp_path: Path, fault_server: FaultServer) -> None:
    config = _write_config(tmp_path / "gw.toml", fault_server)
    result = subprocess.run(
        [sys.executable, "-m", "llmplex", "serve", "--config", str(config)],
        env=_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3, result
    assert "LLMPLEX_MASTER_KEY" in result.stderr and result.stdout == ""


def test_item_5_serve_prints_its_url_logs_json_without_secrets_and_shuts_down_gracefully(
    tmp_path: Path, fault_server: FaultServer
) -> None:
    key_file = tmp_path / "master.key"
    key_file.write_text(MASTER_KEY + "\n")
    config = _write_config(tmp_path / "gw.toml", fault_server)
    env = _environment(tmp_path, LLMPLEX_MASTER_KEY_FILE=str(key_file))
    with _serve(["--config", str(config), "--host", "127.0.0.1"], env) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        client = openai.OpenAI(base_url=url + "/v1", api_key=MASTER_KEY, max_retries=0)
        assert client.chat.completions.create(**HELLO).choices[0].message.content == "hello"  # type: ignore[call-overload]
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url + "/v1", api_key=PROVIDER_KEY, max_retries=0).models.list()
        # an answer trickling in for ~2 s is in flight when SIGTERM comes: it still completes
        fault_server.enqueue(Fault.trickle(interval=0.005))
        outcome: dict[str, Any] = {}

        def slow_call() -> None:
            answer = client.chat.completions.create(
                model="faulty:gpt-4o-mini", messages=[{"role": "user", "content": "x"}]
            )
            outcome["text"] = answer.choices[0].message.content

        caller = threading.Thread(target=slow_call)
        caller.start()
        assert fault_server.wait_for_requests(1, 60)  # the call is in flight at the upstream
        process.send_signal(signal.SIGTERM)
        caller.join(15)
        assert outcome.get("text") == "Hello! How can I help?"
        _, stderr = process.communicate(timeout=15)
        assert process.returncode in (0, -signal.SIGTERM), stderr  # uvicorn re-raises the signal once it is done
        assert "Application shutdown complete." in stderr
    logs = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    requests = [entry for entry in logs if entry["message"] == "request"]
    assert {entry["status"] for entry in requests} >= {200, 401}
    assert MASTER_KEY not in stderr and PROVIDER_KEY not in stderr


def test_item_5_serve_speaks_tls(tmp_path: Path, fault_server: FaultServer) -> None:
    if shutil.which("openssl") is None:
        pytest.fail("this test makes its certificate with openssl: apt-get install openssl (tools/ensure_services.sh)")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    config = _write_config(tmp_path / "gw.toml", fault_server)
    env = _environment(tmp_path, LLMPLEX_MASTER_KEY=MASTER_KEY)
    with _serve(["--config", str(config), "--tls-certfile", str(cert), "--tls-keyfile", str(key)], env) as (_, url):
        assert url.startswith("https://127.0.0.1:")
        with httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as http:
            assert http.get(url + "/health/liveness").status_code == 200
            answer = http.post(url + "/v1/chat/completions", json=HELLO, headers=AUTH)
        assert answer.json()["choices"][0]["message"]["content"] == "hello"


def test_item_5_serve_with_workers_shares_the_port_and_adds_up_the_metrics(
    tmp_path: Path, fault_server: FaultServer
) -> None:
    config = _write_config(tmp_path / "gw.toml", fault_server)
    env = _environment(tmp_path, LLMPLEX_MASTER_KEY=MASTER_KEY)
    with _serve(["--config", str(config), "--workers", "2"], env) as (process, url):
        for _ in range(12):  # a new connection each time: the kernel spreads them over the workers
            # the URL is printed once the socket is bound: a request waits in its backlog until a worker is up
            reply = httpx.post(
                url + "/v1/chat/completions", json=HELLO, headers={**AUTH, "connection": "close"}, timeout=60
            )
            assert reply.status_code == 200
        text = httpx.get(url + "/metrics").text
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    # every worker logs as the single process does: a JSON access line per request
    logs = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    answered = [
        entry for entry in logs if entry["message"] == "request" and entry.get("endpoint") == "chat.completions"
    ]
    assert len(answered) == 12, stderr
    total = (
        # the config file names no model: mock:echo counts as "other", of provider "mock" (issue 31 item 2)
        'llmplex_gateway_requests_total{endpoint="chat.completions",key="master",model="other",provider="mock",'
        'status="200"} 12.0'
    )
    assert total in text, text


def test_item_5_serve_without_the_gateway_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['uvicorn'] = None; sys.argv = ['llmplex', 'serve']; "
        "from llmplex.cli.main import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=_environment(tmp_path, LLMPLEX_MASTER_KEY=MASTER_KEY),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3, result
    assert "pip install 'llmplex[gateway]'" in result.stderr and "uvicorn" in result.stderr
