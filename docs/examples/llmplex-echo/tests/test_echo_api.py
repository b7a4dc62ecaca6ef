"""llmplex-echo reads what the echo API says: waits, statuses, finish reasons (respx fakes the API)."""

from __future__ import annotations

from collections.abc import Iterator
from email.utils import formatdate

import httpx
import pytest
import respx

import llmplex
from llmplex.errors import LLMRateLimitError, LLMServerError

BASE_URL = "http://echo.test"


@pytest.fixture
def api() -> Iterator[respx.Route]:
    with respx.mock(base_url=BASE_URL) as router:
        yield router.post("/v1/echo")


@pytest.fixture
def llm() -> llmplex.Client:
    return llmplex.Client(providers={"echo": {"base_url": BASE_URL}}, throttle={"max_attempts": 1})


def test_retry_after_as_an_http_date_is_read(api: respx.Route, llm: llmplex.Client) -> None:
    wait_until = formatdate(1e10, usegmt=True)  # far ahead: the wait is positive
    body = {"error": {"type": "rate_limited", "message": "slow down"}}
    api.mock(return_value=httpx.Response(429, json=body, headers={"retry-after": wait_until}))
    with pytest.raises(LLMRateLimitError) as caught:
        llm.complete("echo:echo-1", "hi")
    assert caught.value.retry_after is not None
    assert caught.value.retry_after > 0


def test_a_408_request_timeout_is_retried(api: respx.Route, llm: llmplex.Client) -> None:
    body = {"error": {"type": "timeout", "message": "the request took too long"}}
    api.mock(return_value=httpx.Response(408, json=body))
    with pytest.raises(LLMServerError) as caught:
        llm.complete("echo:echo-1", "hi")
    assert caught.value.retryable
    assert caught.value.status_code == 408


def test_an_answer_cut_by_max_tokens_ends_with_finish_reason_length(api: respx.Route, llm: llmplex.Client) -> None:
    usage = {"input_tokens": 3, "output_tokens": 2}
    body = {"id": "e1", "model": "echo-1", "text": "cut sh", "usage": usage, "finish_reason": "length"}
    api.mock(return_value=httpx.Response(200, json=body))
    assert llm.complete("echo:echo-1", "hi", max_tokens=2).finish_reason == "length"
