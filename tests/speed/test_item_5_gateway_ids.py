"""Issue 34 item 5: the ids the gateway makes for its answers (``chatcmpl-…``, ``msg_…``) cost no system call.

``new_id`` took ``secrets.token_hex(12)``: a ``getrandom`` system call per id (2.7 % of ``llmplex serve``'s
py-spy samples at 64 in flight on this VM). It now reads the ``random`` module's generator (seeded from the
system at start and, by ``os.register_at_fork``, again in every forked worker). What must not change: 24 hex
digits after the prefix, 96 random bits, no two alike.
"""

from __future__ import annotations

import os
import re
import secrets

import pytest

from llmplex.gateway.wire import new_id


def test_item_5_gateway_ids_ask_the_kernel_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> bytes:
        raise AssertionError("a system call for randomness")

    monkeypatch.setattr(os, "urandom", refused)
    monkeypatch.setattr(secrets, "token_hex", refused)
    monkeypatch.setattr(secrets, "token_bytes", refused)
    made = {new_id("chatcmpl-") for _ in range(20_000)}
    assert len(made) == 20_000
    assert all(re.fullmatch(r"chatcmpl-[0-9a-f]{24}", made_id) for made_id in made)
