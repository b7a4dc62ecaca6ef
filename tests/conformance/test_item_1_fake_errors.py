"""Issue 14 item 1: the kit's failures carry valid wait headers in each form, and the status of each kind."""

from __future__ import annotations

from llmplex.retry_after import requested_wait
from llmplex.testing import FakeError
from llmplex.testing.replies import ERROR_KINDS


def test_item_1_retry_after_is_whole_seconds_not_a_float() -> None:
    assert FakeError("rate_limit", "wait", retry_after=7.0).headers() == {"retry-after": "7"}


def test_item_1_retry_after_as_an_http_date_and_in_milliseconds() -> None:
    now = 1_800_000_000.0
    as_date = FakeError("rate_limit", "wait", retry_after=7, retry_after_form="http-date").headers(now=now)
    assert as_date == {"retry-after": "Fri, 15 Jan 2027 08:00:07 GMT"}
    assert requested_wait(None, as_date, now=lambda: now) == 7.0
    as_ms = FakeError("rate_limit", "wait", retry_after=7, retry_after_form="ms").headers()
    assert as_ms == {"retry-after-ms": "7000"}
    assert FakeError("server", "no wait").headers() == {}


def test_item_1_every_status_the_issue_lists_has_a_kind() -> None:
    statuses = {expected.status for expected in ERROR_KINDS.values()}
    assert {400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 529} <= statuses
    assert FakeError("quota", "no money").status == 429
    assert FakeError("connection", "reset").status is None
