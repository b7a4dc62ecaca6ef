"""Issue 14 item 3: ``llmplex.http``'s default HTTP status -> typed error mapping, which a plugin extends.

It agrees with the conformance kit's ``ERROR_KINDS`` (the statuses the kit
checks every plugin against), reads the wait in each header form, survives
bodies that are not JSON (a proxy's HTML page, a body nested past Python's
limit) with a short, masked excerpt, and lets a plugin's ``override`` decide
first.
"""

from __future__ import annotations

import time
from email.utils import formatdate

import httpx
import pytest
import respx

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
)
from llmplex.http import body_excerpt, classify_http_error, error_for_status, error_from_response
from llmplex.testing.http_wire import BAD_GATEWAY_PAGE
from llmplex.testing.replies import ERROR_KINDS, ErrorKind, FakeError

SECRET = "sk-platform0123456789abcdef"

STATUS_KINDS = [kind for kind, expected in ERROR_KINDS.items() if expected.status is not None]


def _body(kind: ErrorKind) -> object:
    if kind == "bad_gateway":
        return BAD_GATEWAY_PAGE
    code = "insufficient_quota" if kind == "quota" else kind
    return {"error": {"message": f"{kind} for key {SECRET}", "type": code, "code": code}}


@pytest.mark.parametrize("kind", STATUS_KINDS)
def test_item_3_every_kit_status_becomes_its_error_kind(kind: ErrorKind) -> None:
    expected = ERROR_KINDS[kind]
    assert expected.status is not None
    error = error_for_status(expected.status, {}, _body(kind))
    assert isinstance(error, expected.classes), f"{kind}: {type(error).__name__}"
    assert error.retryable is expected.retryable
    assert error.status_code == expected.status
    assert SECRET not in str(error)
    assert SECRET not in repr(error.response_body)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, LLMBadRequestError),
        (402, LLMQuotaExhaustedError),
        (410, LLMBadRequestError),
        (499, LLMBadRequestError),
        (500, LLMServerError),
        (504, LLMServerError),
        (529, LLMServerError),
        (599, LLMServerError),
        (302, LLMAPIError),
        (600, LLMAPIError),
    ],
)
def test_item_3_statuses_outside_the_kit(status: int, cls: type[LLMAPIError]) -> None:
    error = error_for_status(status)
    assert type(error) is cls
    assert str(status) in str(error)


@pytest.mark.parametrize(
    ("error", "quota"),
    [
        ({"error": {"type": "insufficient_quota"}}, True),
        ({"error": {"code": "QUOTA_EXCEEDED"}}, True),
        ({"type": "billing_hard_limit_reached"}, True),
        ({"error": {"code": "credit_balance_too_low"}}, True),
        ({"error": {"type": "rate_limit_error", "message": "you exceeded your quota per minute"}}, False),
        ({"error": {"status": "RESOURCE_EXHAUSTED"}}, False),
        ("quota", False),
        (None, False),
    ],
)
def test_item_3_429_is_a_rate_limit_unless_the_error_code_names_a_quota(error: object, quota: bool) -> None:
    mapped = error_for_status(429, {}, error)
    assert type(mapped) is (LLMQuotaExhaustedError if quota else LLMRateLimitError)
    assert mapped.retryable is not quota


@pytest.mark.parametrize("kind", ["rate_limit", "overloaded", "unavailable"])
@pytest.mark.parametrize("form", ["seconds", "http-date", "ms"])
def test_item_3_retry_after_is_read_in_each_form(kind: ErrorKind, form: str) -> None:
    fake = FakeError(kind, "wait", retry_after=7, retry_after_form=form)  # type: ignore[arg-type]
    assert fake.status is not None
    error = error_for_status(fake.status, fake.headers(), {"error": {"message": "wait"}})
    assert isinstance(error, LLMRateLimitError | LLMServerError)
    assert error.retry_after is not None
    assert 5.0 <= error.retry_after <= 7.0


def test_item_3_a_wait_read_from_the_body_wins_and_a_bad_header_is_no_wait() -> None:
    assert error_for_status(429, {"retry-after": "12"}, None, retry_after=3.0).retry_after == 3.0  # type: ignore[attr-defined]
    assert error_for_status(503, {"Retry-After": "soon"}).retry_after is None  # type: ignore[attr-defined]
    past = formatdate(time.time() - 60, usegmt=True)
    assert error_for_status(429, {"Retry-After": past}).retry_after == 0.0  # type: ignore[attr-defined]


def test_item_3_an_html_502_gives_a_short_masked_excerpt() -> None:
    page = f"<html><head><title>502 Bad Gateway</title></head><body>upstream said {SECRET}" + "x" * 50_000
    error = error_for_status(502, {"content-type": "text/html"}, page + "</body></html>")
    assert isinstance(error, LLMServerError)
    assert error.retryable
    message = str(error)
    assert "502 Bad Gateway" in message
    assert "<" not in message
    assert SECRET not in message
    assert len(message) < 400
    assert isinstance(error.response_body, str)
    assert len(error.response_body) <= 2000
    assert SECRET not in error.response_body


def test_item_3_the_message_names_what_the_provider_said() -> None:
    assert "model not found" in str(error_for_status(404, {}, {"error": {"message": "model not found"}}))
    assert "bad field" in str(error_for_status(422, {}, {"detail": "bad field"}))
    assert "flat" in str(error_for_status(400, {}, {"error": "flat"}))
    assert "no explanation" in str(error_for_status(400, {}, None))
    assert "[1, 2]" in str(error_for_status(400, {}, [1, 2]))


def test_item_3_key_hint_is_on_authentication_errors_only() -> None:
    assert "check ECHO_API_KEY" in str(error_for_status(401, {}, None, key_hint="check ECHO_API_KEY"))
    assert "check ECHO_API_KEY" in str(error_for_status(403, {}, None, key_hint="check ECHO_API_KEY"))
    assert "check ECHO_API_KEY" not in str(error_for_status(400, {}, None, key_hint="check ECHO_API_KEY"))


def test_item_3_a_plugin_override_decides_first_and_falls_back_to_the_default() -> None:
    def override(status: int, body: object) -> type[LLMAPIError] | None:
        if isinstance(body, dict) and body.get("code") == "overloaded_error":
            return LLMServerError
        return None

    assert type(error_for_status(400, {}, {"code": "overloaded_error"}, override=override)) is LLMServerError
    assert type(error_for_status(400, {}, {"code": "invalid"}, override=override)) is LLMBadRequestError
    assert type(error_for_status(429, {}, None, override=override)) is LLMRateLimitError


def test_item_3_request_id_headers_and_provider_facts() -> None:
    cause = RuntimeError("underlying")
    error = error_for_status(
        500,
        {"X-Request-Id": "req_1", "Authorization": f"Bearer {SECRET}"},
        provider="echo",
        model="echo-1",
        cause=cause,
    )
    assert (error.request_id, error.provider, error.model, error.__cause__) == ("req_1", "echo", "echo-1", cause)
    assert SECRET not in repr(error.headers)
    assert error_for_status(500, {"request-id": "r2"}, request_id="mine").request_id == "mine"
    assert error_for_status(400, context={"subtype": "x"}).context == {"subtype": "x"}


def _transport(status: int, content: bytes, content_type: str) -> httpx.MockTransport:
    return httpx.MockTransport(
        lambda request: httpx.Response(status, content=content, headers={"content-type": content_type})
    )


def test_item_3_classify_http_error_reads_httpx_status_errors_only() -> None:
    with httpx.Client(transport=_transport(502, BAD_GATEWAY_PAGE.encode(), "text/html")) as client:
        response = client.get("http://provider.test/v1")
        with pytest.raises(httpx.HTTPStatusError) as raised:
            response.raise_for_status()
    error = classify_http_error(raised.value, key_hint="unused")
    assert isinstance(error, LLMServerError)
    assert error.__cause__ is raised.value
    assert "JSONDecodeError" not in str(error)
    assert classify_http_error(httpx.ReadTimeout("slow")) is None
    assert classify_http_error(ValueError("other")) is None


def test_item_3_a_json_body_nested_past_the_recursion_limit_is_kept_as_text() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with httpx.Client(transport=_transport(400, deep, "application/json")) as client:
        error = error_from_response(client.get("http://provider.test/v1"))
    assert type(error) is LLMBadRequestError
    assert isinstance(error.response_body, str)
    assert len(str(error)) < 400


def test_item_3_an_unread_streamed_error_is_still_typed() -> None:
    unread = httpx.Response(401, stream=httpx.ByteStream(b'{"error": {"message": "bad key"}}'))
    error = error_from_response(unread)
    assert type(error) is LLMAuthenticationError
    assert error.response_body is None


def test_item_3_body_excerpt_is_one_short_line() -> None:
    assert body_excerpt("<p>a\n\n  b</p>") == "a b"
    assert len(body_excerpt("y" * 1000)) == 200
    assert body_excerpt("y" * 1000).endswith("…")


def test_item_3_a_raw_body_is_parsed_here() -> None:
    """A transport without httpx (a lean path) passes the body's bytes."""
    quota = error_for_status(429, {}, b'{"error": {"type": "insufficient_quota", "message": "pay up"}}')
    assert type(quota) is LLMQuotaExhaustedError
    assert quota.response_body == {"error": {"type": "insufficient_quota", "message": "pay up"}}
    assert "pay up" in str(quota)
    page = error_for_status(502, {}, BAD_GATEWAY_PAGE.encode())
    assert type(page) is LLMServerError
    assert "502 Bad Gateway" in str(page)
    assert error_for_status(500, {}, b"\xff\xfe").response_body == "\ufffd\ufffd"
    assert error_for_status(500, {}, b"").response_body is None


@pytest.mark.parametrize("depth", [65, 500, 5000])
def test_item_3_a_hostile_nested_error_body_is_a_typed_error_end_to_end(depth: int) -> None:
    """A provider (or a proxy) answering JSON nested hundreds deep, a key at the bottom: typed, masked, no
    RecursionError from masking the body (redaction stops at ``MAX_DEPTH``)."""
    import llmplex
    from llmplex.masking.values import MAX_DEPTH, TOO_DEEP

    body = b'{"error": ' * depth + f'"{SECRET}"'.encode() + b"}" * depth
    with respx.mock(base_url="http://echo.test") as router:
        router.post("/v1/echo").mock(return_value=httpx.Response(400, content=body))
        with (
            llmplex.Client(providers={"echo": {"base_url": "http://echo.test"}}) as llm,
            pytest.raises(LLMBadRequestError) as caught,
        ):
            llm.complete("echo:echo-1", "hi")
    error = caught.value
    assert SECRET not in str(error)
    assert SECRET not in repr(error.response_body)
    if depth > 1000:  # past what json can parse: kept as text, cut
        assert isinstance(error.response_body, str)
        assert len(error.response_body) <= 2000
        return
    walked, level = error.response_body, 0
    while isinstance(walked, dict):
        walked, level = walked["error"], level + 1
    assert (walked, level) == (TOO_DEEP, MAX_DEPTH)
