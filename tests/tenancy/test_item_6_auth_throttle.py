"""Issue 31 item 6: failed authentication is throttled per client address, through the limits storage.

Wrong keys on the API, wrong passwords at ``/ui`` and wrong keys on ``/admin`` count against the
address they came from; past ``[gateway] auth_failures`` in ``auth_failure_window`` seconds the
address gets 429 with ``Retry-After`` on every request that presents a key (the right one too),
while other addresses are served. With ``[limits] storage = "redis://..."`` every gateway on that
Redis sees the same count.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.harness import MASTER_KEY, gateway_config
from tests.gateway.keyed_support import wait_for
from tests.support.fixtures import redis_server, redis_session  # noqa: F401
from tests.support.redis_server import RedisServer
from tests.tenancy.guard_support import guarded_gateway

CHAT = "/v1/chat/completions"
HELLO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}


def _http(url: str, source: str = "127.0.0.1") -> httpx.Client:
    """A client of the gateway at ``url`` connecting from ``source`` (an address of 127.0.0.0/8)."""
    return httpx.Client(base_url=url, timeout=10, transport=httpx.HTTPTransport(local_address=source))


def _chat(http: httpx.Client, key: str | None) -> httpx.Response:
    return http.post(CHAT, json=HELLO, headers={"authorization": f"Bearer {key}"} if key else {})


@pytest.fixture
def throttled() -> Iterator[Any]:
    with guarded_gateway(gateway_config(gateway={"auth_failures": 3})) as gateway:
        yield gateway


def test_item_6_wrong_keys_from_one_address_get_429_with_retry_after(throttled: Any) -> None:
    with _http(throttled.url) as http, _http(throttled.url, "127.0.0.2") as other:
        for _ in range(5):  # requests with no key at all guess nothing: not counted
            assert _chat(http, None).status_code == 401
        assert _chat(http, MASTER_KEY).status_code == 200
        for n in range(3):
            assert _chat(http, f"sk-guess-{n}").status_code == 401
        refused = _chat(http, MASTER_KEY)  # even the right key waits: a guesser cannot tell it found one
        assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 60
        assert "auth_failures" in refused.json()["error"]["message"]
        assert _chat(http, "sk-guess-again").status_code == 429  # nothing further is even looked up
        assert _chat(other, MASTER_KEY).status_code == 200  # another address is served
        anthropic = http.post("/v1/messages", json={**HELLO, "max_tokens": 5}, headers={"x-api-key": MASTER_KEY})
        assert anthropic.status_code == 429 and anthropic.json()["error"]["type"] == "rate_limit_error"
        assert http.get("/health/liveness").status_code == 200  # what needs no key still answers


def test_item_6_the_address_is_let_in_again_once_its_window_passes() -> None:
    config = gateway_config(gateway={"auth_failures": 2, "auth_failure_window": 1})
    with guarded_gateway(config) as gateway, _http(gateway.url) as http:
        assert [_chat(http, "sk-wrong").status_code for _ in range(2)] == [401, 401]
        assert _chat(http, MASTER_KEY).status_code == 429
        wait_for(lambda: _chat(http, MASTER_KEY).status_code == 200, timeout=10)


def test_item_6_wrong_dashboard_passwords_and_admin_keys_are_throttled(tmp_path: Path) -> None:
    config = gateway_config(gateway={"auth_failures": 3, "database": f"sqlite:///{tmp_path / 'gw.db'}"})
    with guarded_gateway(config, keyed=True) as gateway, _http(gateway.url) as http:
        assert http.get("/ui/").status_code == 401  # the login page itself is no failure
        assert http.post("/ui/login", data={"key": "guess-1"}).status_code == 401
        assert http.post("/ui/login", data={"key": "guess-2"}).status_code == 401
        assert http.get("/admin/keys", headers={"authorization": "Bearer guess-3"}).status_code == 403
        refused = http.post("/ui/login", data={"key": MASTER_KEY})
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert _chat(http, MASTER_KEY).status_code == 429
    with guarded_gateway(config, keyed=True) as gateway, _http(gateway.url) as http:  # memory:// is per gateway
        assert http.post("/ui/login", data={"key": MASTER_KEY}, follow_redirects=False).status_code == 303


def test_item_6_the_throttle_is_shared_by_every_gateway_on_one_redis(redis_server: RedisServer) -> None:  # noqa: F811
    config = gateway_config(gateway={"auth_failures": 3}, limits={"storage": redis_server.url})
    with guarded_gateway(config) as first, guarded_gateway(config) as second:
        with _http(first.url) as on_first, _http(second.url) as on_second:
            assert _chat(on_first, "sk-wrong-1").status_code == 401
            assert _chat(on_second, "sk-wrong-2").status_code == 401
            assert _chat(on_first, "sk-wrong-3").status_code == 401
            assert _chat(on_second, MASTER_KEY).status_code == 429  # the second gateway saw one failure itself
            assert _chat(on_first, MASTER_KEY).status_code == 429
        with _http(second.url, "127.0.0.3") as elsewhere:
            assert _chat(elsewhere, MASTER_KEY).status_code == 200


def test_item_6_an_ipv6_host_is_counted_by_its_64_and_a_mapped_ipv4_as_itself() -> None:
    from llmplex.gateway.guard.throttle import client_address

    def at(host: str | None) -> str:
        return client_address({"client": (host, 1234) if host else None})

    assert at("2001:db8:1:2::1") == at("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64"
    assert at("2001:db8:1:3::1") != at("2001:db8:1:2::1")  # another /64, another count
    assert at("::ffff:192.0.2.7") == at("192.0.2.7") == "192.0.2.7"
    assert at(None) == "unknown"


def test_item_6_an_unreachable_limits_storage_never_locks_everyone_out(caplog: pytest.LogCaptureFixture) -> None:
    from tests.support.redis_server import free_port

    config = gateway_config(gateway={"auth_failures": 1}, limits={"storage": f"redis://127.0.0.1:{free_port()}/0"})
    with guarded_gateway(config) as gateway, _http(gateway.url) as http:
        assert [_chat(http, f"sk-wrong-{n}").status_code for n in range(3)] == [401, 401, 401]
        assert _chat(http, MASTER_KEY).status_code == 200  # nothing counted, nothing refused
    warnings = [r for r in caplog.records if "failed-authentication throttle" in r.getMessage()]
    assert len(warnings) == 1  # one line, not one per request
