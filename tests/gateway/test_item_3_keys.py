"""Issue 22 item 3: virtual keys — the CLI and admin API, and every check made before anything is sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from llmplex.cli.main import cli
from llmplex.gateway.keys.store import hash_key, parse_duration
from llmplex.store.database import data_dir
from tests.contract.fixtures_openai import TokenUsage
from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, gateway_config
from tests.gateway.keyed_support import MASTER, PRICED, KeyedGateway, bearer, chat, running_keyed, wait_for
from tests.support.fault_server import Fault, FaultServer

V1 = "/v1/chat/completions"


@pytest.fixture
def keyed(fault_server: FaultServer) -> Iterator[KeyedGateway]:
    config = gateway_config(
        fault_server,
        timeout=60,  # trickled answers take seconds on a loaded machine
        aliases={"fast": "mock:echo", "cheap": PRICED},
        fallbacks={PRICED: ["mock:echo", "faultyresp:gpt-4o-mini"]},
        gateway={"models": ["mock:echo", PRICED], "keepalive_seconds": 0.2, "key_cache_seconds": 0},
    )
    with running_keyed(config) as gateway:
        yield gateway


def _post(gateway: KeyedGateway, key: str, body: dict[str, object], **headers: str) -> httpx.Response:
    return httpx.post(gateway.url + V1, json=body, headers={**bearer(key), **headers}, timeout=20)


def test_item_3_cli_prints_the_key_once_alone_and_keeps_only_its_hash() -> None:
    runner = CliRunner()
    made = runner.invoke(
        cli, ["keys", "create", "--name", "app", "--budget-usd", "5", "--budget-period", "30d", "--rpm", "10",
              "--tpm", "1000", "--max-parallel", "2", "--models", "openai:*,mock:echo", "--expires", "12h"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert made.stdout == key + "\n" and key.startswith("sk-llmplex-") and len(key) > 40
    database = (data_dir() / "logs.db").read_bytes() + b"".join(p.read_bytes() for p in data_dir().glob("logs.db-*"))
    assert key.encode() not in database and hash_key(key).encode() in database

    shown = json.loads(runner.invoke(cli, ["keys", "show", "app", "--json"]).stdout)
    assert shown["budget_usd"] == "5" and shown["budget_period_seconds"] == 30 * 86400 and shown["rpm"] == 10
    assert shown["models"] == ["openai:*", "mock:echo"] and shown["status"] == "active" and "key" not in shown
    expires = datetime.fromisoformat(shown["expires_at"]) - datetime.fromisoformat(shown["created_at"])
    assert expires == timedelta(hours=12)

    whole = json.loads(runner.invoke(cli, ["keys", "create", "--name", "other", "--json"]).stdout)
    assert whole["key"].startswith("sk-llmplex-") and whole["name"] == "other" and whole["models"] == []

    assert runner.invoke(cli, ["keys", "update", "app", "--rpm", "20"]).exit_code == 0
    assert "rpm: 20" in runner.invoke(cli, ["keys", "show", "app"]).stdout
    listed = runner.invoke(cli, ["keys", "list"]).stdout.splitlines()
    assert [line.split("\t")[:2] for line in listed] == [["app", "active"], ["other", "active"]]
    assert key not in runner.invoke(cli, ["keys", "list", "--json"]).stdout
    assert json.loads(runner.invoke(cli, ["keys", "revoke", "app", "--json"]).stdout)["status"] == "revoked"


@pytest.mark.parametrize("bad", ["30", "12y", "-5d", "0s", "1.5h", "", "d30", "99999999999d"])
def test_item_3_bad_durations_are_refused_saying_the_form(bad: str) -> None:
    result = CliRunner().invoke(cli, ["keys", "create", "--name", "k", "--budget-usd", "1", "--budget-period", bad])
    assert result.exit_code != 0 and result.stdout == ""
    assert "90s, 12h, 30d" in result.stderr
    assert CliRunner().invoke(cli, ["keys", "list"]).stdout == ""  # nothing was made
    assert parse_duration("90s") == 90 and parse_duration("12h") == 43200 and parse_duration("30d") == 2592000


def test_item_3_bad_key_options_are_typed_errors() -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["keys", "create", "--name", "a"]).exit_code == 0
    again = runner.invoke(cli, ["keys", "create", "--name", "a"])
    assert again.exit_code != 0 and "exists already" in again.stderr and again.stdout == ""
    for args, says in (
        (["--name", "master"], "not valid"),
        (["--name", "has space"], "not valid"),
        (["--name", "b", "--budget-usd", "-1"], "US dollars"),
        (["--name", "b", "--budget-usd", "nan"], "US dollars"),
        (["--name", "b", "--rpm", "0"], "at least 1"),
        (["--name", "b", "--budget-period", "30d"], "--budget-usd"),
    ):
        result = runner.invoke(cli, ["keys", "create", *args])
        assert result.exit_code != 0 and says in result.stderr, (args, result.output)
    assert runner.invoke(cli, ["keys", "show", "nobody"]).stderr.count("no key is named") == 1


def test_item_3_unknown_revoked_and_expired_keys_get_401_and_nothing_is_sent(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    good = keyed.create_key("good")
    revoked = keyed.create_key("gone")
    expired = keyed.create_key("old", expires="90s")
    assert httpx.delete(f"{keyed.url}/admin/keys/gone", headers=MASTER).json()["status"] == "revoked"
    keyed.keys.update("old", expires_at=datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=1))
    for key, says in (
        ("sk-llmplex-unknown", "not valid"),
        (revoked, "'gone' is revoked"),
        (expired, "'old' is expired"),
    ):
        answer = _post(keyed, key, chat())
        assert answer.status_code == 401 and says in answer.json()["error"]["message"], answer.text
        assert answer.json()["error"]["code"] == "invalid_api_key"
    assert fault_server.requests == []
    assert _post(keyed, good, chat()).status_code == 200


def test_item_3_models_outside_the_patterns_are_403_aliases_and_fallbacks_included(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    key = keyed.create_key("faulty-only", models=["faulty:*"])
    assert _post(keyed, key, chat("mock:echo")).status_code == 403
    denied = _post(keyed, key, chat("fast"))  # an alias of mock:echo
    assert denied.status_code == 403 and "mock:echo" in denied.json()["error"]["message"]
    assert _post(keyed, key, chat("cheap")).status_code == 200  # an alias of an allowed model
    anthropic = httpx.post(
        keyed.url + "/v1/messages",
        json={"model": "fast", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-api-key": key},
    )
    assert anthropic.status_code == 403 and anthropic.json()["error"]["type"] == "permission_error"
    # the primary fails: its fallbacks are mock:echo (not allowed) and faultyresp: (not allowed): neither is tried
    fault_server.enqueue(Fault.server_error(500))
    failed = _post(keyed, key, chat())
    assert failed.status_code >= 500
    assert keyed.mock.calls == [] and [r.path for r in fault_server.requests].count("/v1/responses") == 0
    # a key that may use the fallback gets it
    both = keyed.create_key("both", models=["faulty:*", "mock:*"])
    fault_server.enqueue(Fault.server_error(500))
    assert _post(keyed, both, chat()).status_code == 200 and len(keyed.mock.calls) == 1
    listed = {m["id"] for m in httpx.get(keyed.url + "/v1/models", headers=bearer(key)).json()["data"]}
    assert listed == {PRICED, "cheap"}


def test_item_3_rate_limits_are_429_with_retry_after(keyed: KeyedGateway, fault_server: FaultServer) -> None:
    key = keyed.create_key("slow", rpm=2)
    assert [_post(keyed, key, chat()).status_code for _ in range(2)] == [200, 200]
    refused = _post(keyed, key, chat())
    assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 60
    assert "rpm" in refused.json()["error"]["message"] and len(fault_server.requests) == 2
    tokens = keyed.create_key("few-tokens", tpm=50)
    too_big = _post(keyed, tokens, chat(text="x" * 1000))
    assert too_big.status_code == 429 and "tpm" in too_big.json()["error"]["message"]


def test_item_3_max_parallel_holds_and_frees_slots_streams_and_failures_included(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    key = keyed.create_key("one-at-a-time", max_parallel=1)

    async def race() -> list[int]:
        fault_server.enqueue(Fault.trickle(0.002))
        async with httpx.AsyncClient(timeout=30) as client:
            first = asyncio.ensure_future(client.post(keyed.url + V1, json=chat(), headers=bearer(key)))
            await asyncio.to_thread(wait_for, lambda: bool(fault_server.requests))
            second = await client.post(keyed.url + V1, json=chat(), headers=bearer(key))
            return [(await first).status_code, second.status_code]

    assert asyncio.run(race()) == [200, 429]
    fault_server.enqueue(Fault.server_error(500))
    assert _post(keyed, key, chat("faultyresp:gpt-4o-mini")).status_code >= 500  # a failure frees its slot
    with httpx.stream("POST", keyed.url + V1, json=chat(stream=True), headers=bearer(key)) as stream:
        assert stream.status_code == 200 and b"[DONE]" in stream.read()
    for _ in range(3):  # every slot was given back
        assert _post(keyed, key, chat()).status_code == 200


def test_item_3_a_spent_budget_is_429_saying_so(keyed: KeyedGateway, fault_server: FaultServer) -> None:
    key = keyed.create_key("small", budget_usd="0.00002", budget_period="30d")  # 3 answers at $0.00000885
    codes = [_post(keyed, key, chat()).status_code for _ in range(3)]
    keyed.flush()
    spent = _post(keyed, key, chat())
    assert codes == [200, 200, 200] and spent.status_code == 429, spent.text
    error = spent.json()["error"]
    assert "budget" in error["message"] and "spent" in error["message"] and error["code"] == "budget_exceeded"
    assert 0 < int(spent.headers["retry-after"]) <= 30 * 86400 and len(fault_server.requests) == 3
    httpx.patch(f"{keyed.url}/admin/keys/small", json={"budget_usd": "1"}, headers=MASTER).raise_for_status()
    assert _post(keyed, key, chat()).status_code == 200


def test_item_3_keys_in_odd_headers_are_refused_and_the_key_is_never_echoed(keyed: KeyedGateway) -> None:
    key = keyed.create_key("odd")
    url = keyed.url + V1
    for headers in (
        {"authorization": f"Basic {key}"},
        {"authorization": f"Token {key}"},
        {"authorization": key},
        {"api-key": key},
        {"x-goog-api-key": key},
        {"authorization": f"Bearer {key}x"},
        {"authorization": f"Bearer {key[:-1]}"},
        {"authorization": "Bearer " + "a" * 50_000},
        {"x-api-key": key.upper()},
    ):
        answer = httpx.post(url, json=chat(), headers=headers)
        assert answer.status_code in (401, 431), headers.keys()
        assert key not in answer.text and key[12:] not in answer.text
    assert httpx.post(url + f"?api_key={key}", json=chat()).status_code == 401
    assert httpx.post(url, json=chat(), headers={"authorization": f"bearer   {key}"}).status_code == 200
    assert httpx.post(url, json=chat(), headers={"x-api-key": key}).status_code == 200


def test_item_3_admin_api_needs_the_master_key(keyed: KeyedGateway) -> None:
    key = keyed.create_key("user")
    for path in ("/admin/keys", "/admin/spend", "/admin/keys/user"):
        assert httpx.get(keyed.url + path).status_code == 401
        assert httpx.get(keyed.url + path, headers=bearer(key)).status_code == 403
        assert httpx.get(keyed.url + path, headers=MASTER).status_code == 200
    made = httpx.post(keyed.url + "/admin/keys", json={"name": "x", "budget_period": "3 weeks"}, headers=MASTER)
    assert made.status_code == 400 and "90s, 12h, 30d" in made.json()["error"]["message"]
    assert httpx.post(keyed.url + "/admin/keys", content=b"{not json", headers=MASTER).status_code == 400
    assert httpx.get(keyed.url + "/admin/keys/nobody", headers=MASTER).status_code == 400
    listed = httpx.get(keyed.url + "/admin/keys", headers=MASTER).text
    assert key not in listed and MASTER_KEY not in listed and PROVIDER_KEY not in listed


def test_item_3_revoked_mid_stream_the_stream_ends_and_is_counted_then_401(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    key = keyed.create_key("streamer")
    fault_server.enqueue(Fault.held("the whole answer", usage=TokenUsage(7, 3)))  # silent until released
    with httpx.stream(
        "POST", keyed.url + V1, json=chat(PRICED, stream=True), headers=bearer(key), timeout=60
    ) as stream:
        chunks = stream.iter_bytes()
        first = next(chunks)  # a keep-alive comment: the call is in flight, its provider still silent
        assert first.startswith(b":"), first
        assert httpx.delete(f"{keyed.url}/admin/keys/streamer", headers=MASTER).status_code == 200
        fault_server.release()  # the answer starts only once the key is revoked
        body = first + b"".join(chunks)
    assert stream.status_code == 200 and b"whole" in body and b"[DONE]" in body
    assert _post(keyed, key, chat()).status_code == 401
    keyed.flush(2)
    streamed = next(r for r in keyed.recorder.records if r.stream)
    assert (streamed.key_name, streamed.status, streamed.error_type) == ("streamer", 200, None)
    spend = httpx.get(keyed.url + "/admin/spend?key=streamer", headers=MASTER).json()["data"]
    assert spend[0]["requests"] == 1 and spend[0]["input_tokens"] == 7  # the 401 had no key to name


def test_item_3_the_database_is_the_one_the_config_names(tmp_path: Path, fault_server: FaultServer) -> None:
    url = f"sqlite:///{tmp_path / 'gateway.db'}"
    config = gateway_config(fault_server, gateway={"database": url, "key_cache_seconds": 0})
    config_file = tmp_path / "llmplex.toml"
    config_file.write_text(f'[gateway]\ndatabase = "{url}"\n')
    made = CliRunner().invoke(cli, ["--config", str(config_file), "keys", "create", "--name", "cli-made"])
    key = made.stdout.strip()
    with running_keyed(config) as gateway:  # the CLI and the running gateway share the database
        assert _post(gateway, key, chat()).status_code == 200
        CliRunner().invoke(cli, ["--config", str(config_file), "keys", "revoke", "cli-made"])
        assert _post(gateway, key, chat()).status_code == 401
    assert not (data_dir() / "logs.db").exists()


def test_item_3_a_spent_budget_stays_spent_when_the_gateway_restarts(tmp_path: Path, fault_server: FaultServer) -> None:
    """With ``memory://`` limits the counters die with the process: a new one starts from the spend log."""
    from tests.gateway.keyed_support import ServeProcess, write_config

    config = {
        "throttle": {"max_attempts": 1},
        "gateway": {"database": f"sqlite:///{tmp_path / 'gw.db'}"},
        "providers": {
            "faulty": {"plugin": "openai", "base_url": fault_server.url, "api": "chat", "api_key": PROVIDER_KEY}
        },
    }
    config_file = write_config(tmp_path / "llmplex.toml", config)
    made = CliRunner().invoke(
        cli, ["--config", str(config_file), "keys", "create", "--name", "b", "--budget-usd", "0.00001"]
    )
    key = made.stdout.strip()
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg-data")}
    first = ServeProcess(config_file, env)
    try:
        assert httpx.post(first.url + V1, json=chat(), headers=bearer(key), timeout=30).status_code == 200
        wait_for(lambda: httpx.post(first.url + V1, json=chat(), headers=bearer(key), timeout=30).status_code == 429)
    finally:
        first.stop()  # its pending spend rows are written as it exits
    second = ServeProcess(config_file, env)
    try:
        refused = httpx.post(second.url + V1, json=chat(), headers=bearer(key), timeout=30)
        assert refused.status_code == 429 and "spent" in refused.json()["error"]["message"]
    finally:
        second.stop()
    assert len(fault_server.requests) == 2


def test_item_3_an_unreachable_database_is_one_typed_line_without_its_password(tmp_path: Path) -> None:
    config_file = tmp_path / "llmplex.toml"
    config_file.write_text('[gateway]\ndatabase = "postgresql://llmplex:hunter2-secret@127.0.0.1:1/nothing"\n')
    for args in (["keys", "list"], ["keys", "create", "--name", "x"], ["spend"]):
        result = CliRunner().invoke(cli, ["--config", str(config_file), *args])
        assert result.exit_code != 0 and result.stdout == "", args
        assert "cannot be opened" in result.stderr and "[gateway] database" in result.stderr, result.stderr
        assert "hunter2-secret" not in result.output and "Traceback" not in result.output
