"""Issue 34 item 5: a constant log message (no arguments, as the gateway's access line) is searched for secrets once.

The record factory of ``install_log_redaction`` searched every record's message for secrets, so the access line's
constant ``"request"`` was searched on every request. A constant message found clean is now remembered (only clean
text is kept: a message holding a secret is masked every time) until another secret is registered. A message with
arguments is formatted and searched every time, as before.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import pytest

from llmplex.masking import logs
from llmplex.masking.logs import install_log_redaction
from llmplex.masking.values import REDACTED, redact, register_secret

LOG = logging.getLogger("tests.item5.masking")


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The texts ``redact`` was asked to search, through the installed record factory."""
    install_log_redaction()
    seen: list[Any] = []

    def spy(value: Any) -> Any:
        seen.append(value)
        return redact(value)

    monkeypatch.setattr(logs, "redact", spy)
    return seen


def made(msg: Any, *args: Any) -> logging.LogRecord:
    return LOG.makeRecord(LOG.name, logging.INFO, __file__, 0, msg, args, None)


def test_item_5_a_clean_constant_message_is_searched_once(searched: list[Any]) -> None:
    text = f"request {secrets.token_hex(4)}"
    records = [made(text) for _ in range(3)]
    assert searched == [text]
    assert all(record.getMessage() == text and record.msg is text for record in records)


def test_item_5_a_constant_message_with_a_secret_is_masked_every_time(searched: list[Any]) -> None:
    secret = f"sk-{secrets.token_hex(16)}"
    text = f"calling with {secret}"
    records = [made(text) for _ in range(3)]
    assert searched == [text] * 3
    for record in records:
        assert secret not in record.getMessage()
        assert REDACTED in record.getMessage()
    assert text not in logs._clean  # a secret's text is never kept


def test_item_5_a_secret_registered_later_is_masked_in_a_message_found_clean_before(searched: list[Any]) -> None:
    secret = f"plain-{secrets.token_hex(12)}"  # no key shape: masked only once registered
    text = f"connecting as {secret}"
    assert made(text).getMessage() == text
    register_secret(secret)
    masked = made(text).getMessage()
    assert secret not in masked
    assert REDACTED in masked


def test_item_5_a_secret_in_the_arguments_is_masked_every_time(searched: list[Any]) -> None:
    secret = f"sk-{secrets.token_hex(16)}"
    records = [made("header %s=%s", "authorization", f"Bearer {secret}") for _ in range(3)]
    assert len(searched) == 3
    for record in records:
        assert secret not in record.getMessage()
        assert record.args is None


def test_item_5_constant_messages_not_strings_and_mapping_args_are_masked_as_before(searched: list[Any]) -> None:
    secret = f"sk-{secrets.token_hex(16)}"
    assert secret not in made(ValueError(f"key {secret}")).getMessage()  # str() of a non-string message
    record = LOG.makeRecord(LOG.name, logging.INFO, __file__, 0, "key %(key)s", ({"key": secret},), None)
    assert secret not in record.getMessage()


def test_item_5_the_clean_messages_kept_are_bounded(searched: list[Any]) -> None:
    for index in range(logs._MAX_CLEAN + 10):
        made(f"line {index}")
    assert len(logs._clean) <= logs._MAX_CLEAN
