"""A started gateway's first request imports no plugin: the startup loaded the observer plugins (a client's
first call would import them on a worker thread while the worker's event loop waits for it)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

import llmplex
import llmplex.client
import llmplex.plugins.host
from llmplex.gateway.app import create_app
from llmplex.gateway.keys.access import MasterKeyAuthenticator
from tests.gateway.harness import MASTER_KEY, gateway_config


def test_item_7_the_first_request_after_startup_imports_no_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    held: list[str] = []
    list_entries, call_before = llmplex.plugins.host.list_entries, llmplex.client.call_before

    def listing(group: str) -> Any:
        listed.append(group)
        return list_entries(group)

    def holding(fn: Any, deadline: Any, expired: Any) -> Any:
        held.append("first use")
        return call_before(fn, deadline, expired)

    monkeypatch.setattr(llmplex.plugins.host, "list_entries", listing)
    monkeypatch.setattr(llmplex.client, "call_before", holding)
    client = llmplex.Client(gateway_config())
    app = create_app(client, MasterKeyAuthenticator(MASTER_KEY), metrics=False)
    with TestClient(app) as http:
        assert client.host.observers_loaded, "the startup loads the observer plugins"
        listed.clear()
        answer = http.post(
            "/v1/chat/completions",
            headers={"authorization": f"Bearer {MASTER_KEY}"},
            json={"model": "mock:echo", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert answer.status_code == 200, answer.text
    assert listed == [], "the first request listed plugins to import"
    assert held == [], "the first request prepared its call off the event loop, as a first use does"
