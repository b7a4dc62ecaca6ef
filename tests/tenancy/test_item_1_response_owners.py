"""Issue 31 item 1: provider-side state belongs to the key that made it.

A response id the gateway hands out is recorded with its key (and team) in the database; another key's id, or
an id the gateway never handed out, is a 404 in the API's shape and nothing is sent upstream; keys made in the
same team share their responses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from click.testing import CliRunner

from llmplex.cli.main import cli
from tests.gateway.harness import MASTER_KEY, gateway_config
from tests.gateway.keyed_support import MASTER, KeyedGateway
from tests.tenancy.spend_support import running_keyed

CONFIG = gateway_config(gateway={"models": ["mock:echo"], "key_cache_seconds": 0})


@pytest.fixture
def keyed() -> Iterator[KeyedGateway]:
    with running_keyed(CONFIG) as gateway:
        yield gateway


def _sdk(gateway: KeyedGateway, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.url + "/v1", api_key=key, max_retries=0)


def _continue(gateway: KeyedGateway, key: str, previous: str, **extra: Any) -> httpx.Response:
    body = {"model": "mock:echo", "input": "go on", "previous_response_id": previous, **extra}
    return httpx.post(gateway.url + "/v1/responses", json=body, headers={"authorization": f"Bearer {key}"}, timeout=20)


def _assert_not_found(answer: httpx.Response, previous: str) -> None:
    assert answer.status_code == 404, answer.text
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "previous_response_id"
    assert error["code"] == "previous_response_not_found" and previous[:80] in error["message"]


def test_item_1_another_keys_response_id_is_a_404_and_nothing_is_sent_upstream(keyed: KeyedGateway) -> None:
    alice, bob = keyed.create_key("alice"), keyed.create_key("bob")
    first = _sdk(keyed, alice).responses.create(model="mock:echo", input="my secret plan")
    with _sdk(keyed, alice).responses.stream(model="mock:echo", input="streamed secret") as stream:
        for _ in stream:
            pass
        streamed = stream.get_final_response().id
    sent = len(keyed.mock.calls)
    for stolen in (first.id, streamed):
        _assert_not_found(_continue(keyed, bob, stolen), stolen)
        _assert_not_found(_continue(keyed, bob, stolen, stream=True), stolen)  # a stream is refused alike
    with pytest.raises(openai.NotFoundError):  # the official SDK reads it as the API's own 404
        _sdk(keyed, bob).responses.create(model="mock:echo", input="x", previous_response_id=first.id)
    assert len(keyed.mock.calls) == sent  # nothing went upstream
    for own in (first.id, streamed):  # the owner goes on
        assert _continue(keyed, alice, own).status_code == 200
    assert keyed.mock.calls[-1]["previous_response_id"] == streamed
    master = _continue(keyed, MASTER_KEY, first.id)
    _assert_not_found(master, first.id)  # the master key is a caller like the others: not alice


def test_item_1_an_id_the_gateway_never_handed_out_is_a_404(keyed: KeyedGateway) -> None:
    alice = keyed.create_key("alice")
    made = _sdk(keyed, alice).responses.create(model="mock:echo", input="hello").id
    sent = len(keyed.mock.calls)
    for forged in ("mock-999999", made.upper(), made + " ", "' OR 1=1 --", "x" * 300, made[:-1]):
        _assert_not_found(_continue(keyed, alice, forged), forged)
    assert len(keyed.mock.calls) == sent
    keyed.flush()
    rows = httpx.get(keyed.url + "/admin/spend?by=key", headers=MASTER, timeout=10).json()["data"]
    assert {row["key"]: row["requests"] for row in rows}["alice"] == 7  # the refusals are logged, as 404s


def test_item_1_keys_of_one_team_share_responses_and_other_teams_do_not(keyed: KeyedGateway) -> None:
    red_a, red_b = keyed.create_key("red-a", team="red"), keyed.create_key("red-b", team="red")
    blue, loner = keyed.create_key("blue", team="blue"), keyed.create_key("loner")
    made = _sdk(keyed, red_a).responses.create(model="mock:echo", input="team work").id
    assert _continue(keyed, red_b, made).status_code == 200
    for outsider in (blue, loner):
        _assert_not_found(_continue(keyed, outsider, made), made)
    loners = _sdk(keyed, loner).responses.create(model="mock:echo", input="alone").id
    _assert_not_found(_continue(keyed, red_a, loners), loners)  # no team is not a team of its own
    moved = httpx.patch(keyed.url + "/admin/keys/blue", json={"team": "red"}, headers=MASTER, timeout=10)
    assert moved.status_code == 400 and "team" in moved.text  # a key cannot join another team's state later
    shown = httpx.get(keyed.url + "/admin/keys", headers=MASTER, timeout=10).json()["data"]
    teams = {key["name"]: key["team"] for key in shown}
    assert teams == {"red-a": "red", "red-b": "red", "blue": "blue", "loner": None}


def test_item_1_the_owner_is_in_the_database_so_another_replica_knows_it(keyed: KeyedGateway) -> None:
    alice, bob = keyed.create_key("alice"), keyed.create_key("bob")
    made = _sdk(keyed, alice).responses.create(model="mock:echo", input="on replica one").id
    with running_keyed(CONFIG) as replica:  # its own process state, the same database
        assert _continue(replica, alice, made).status_code == 200
        _assert_not_found(_continue(replica, bob, made), made)
        assert replica.mock.calls[-1]["previous_response_id"] == made


def test_item_1_llmplex_keys_create_team_and_a_bad_team_name() -> None:
    runner = CliRunner()
    made = runner.invoke(cli, ["keys", "create", "--name", "svc", "--team", "payments", "--json"])
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["team"] == "payments"
    bad = runner.invoke(cli, ["keys", "create", "--name", "svc2", "--team", "../etc passwd"])
    assert bad.exit_code != 0 and "team name" in bad.output
