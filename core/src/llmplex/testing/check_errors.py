"""Conformance checks of failures: every status and transport failure typed, waits read, retries left to core."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import pytest

from llmplex.client import Client
from llmplex.errors import LLMAPIError, LLMError
from llmplex.reliability import workers
from llmplex.reliability.throttle import ThrottlePolicy
from llmplex.testing.kit_base import KitBase
from llmplex.testing.replies import ERROR_KINDS, ErrorKind, FakeError, RetryAfterForm
from llmplex.types import Message

__all__ = ["ErrorChecks"]

TIMEOUT = 0.5
"""Seconds a request given a stalled answer waits (the ``timeout`` kind)."""
TIMEOUT_LIMIT = 10.0
"""Seconds the kit waits, under its own deadline, for a plugin facing a stalled answer to give up: a plugin
that ignores its timeout fails the check then, not when the stalled provider hangs up minutes later."""


class _KitUnknownError(Exception):
    """An exception no provider plugin can know."""


def _within_limit(send: Callable[[], Any]) -> Any:
    """``send()`` on a worker thread, waited for ``TIMEOUT_LIMIT`` seconds at most (no deadline is set for the
    plugin: what is checked is that it honours the ``timeout`` it is given)."""
    future = workers.submit(send)
    try:
        return future.result(timeout=TIMEOUT_LIMIT)
    except FutureTimeout:
        pytest.fail(
            f"the plugin ignored the timeout: a stalled provider still held the request after {TIMEOUT_LIMIT:.0f}s "
            f"with timeout={TIMEOUT}s (pass `timeout` to the HTTP client's call; None there means no timeout)"
        )


class ErrorChecks(KitBase):
    """Error classification."""

    def _failure(self, llm: Client, transport: Any, error: FakeError) -> LLMError:
        """The error a request answered with ``error`` raises (a ``timeout`` goes through the hooks with a timeout,
        held to the kit's own ``TIMEOUT_LIMIT``)."""
        self.fake_error(transport, error)
        request = self.request(llm, [Message.user("fail please")])
        if error.kind == "timeout":
            send: Callable[[], Any] = lambda: _within_limit(lambda: self.run_request(llm, request, timeout=TIMEOUT))  # noqa: E731
        else:
            send = lambda: llm.complete(self.spec, "fail please")  # noqa: E731
        with pytest.raises(LLMError) as info:
            send()
        return info.value

    @pytest.mark.parametrize("kind", list(ERROR_KINDS))
    def test_errors_are_classified(self, llm: Client, transport: Any, kind: ErrorKind) -> None:
        """Each failure kind becomes the right taxonomy class, with its status and the right ``retryable``."""
        if kind in self.unsupported_error_kinds:
            pytest.xfail(self.unsupported_error_kinds[kind])
        error = self._failure(llm, transport, FakeError(kind, f"kit {kind} failure for key {self.secret}"))
        expected = ERROR_KINDS[kind]
        assert isinstance(error, expected.classes), f"{kind} became {type(error).__name__}: {error}"
        assert error.retryable is expected.retryable, f"{kind} must {'' if expected.retryable else 'not '}be retried"
        assert (error.provider, error.attempts) == (self.prefix, 1)
        if isinstance(error, LLMAPIError) and expected.status is not None:
            assert error.status_code is not None, "an API error keeps its status"
            assert 400 <= error.status_code < 600, "an API error keeps its status"
            if kind != "quota":
                assert error.status_code == expected.status, f"{kind} is HTTP {expected.status}"
        assert "JSONDecodeError" not in str(error), "a body that is not JSON must not surface as a JSON decode failure"
        if self.secret:
            assert self.secret not in str(error)
            assert self.secret not in repr(error)

    @pytest.mark.parametrize(
        ("kind", "form"),
        [("rate_limit", "seconds"), ("rate_limit", "http-date"), ("rate_limit", "ms"), ("overloaded", "seconds")],
    )
    def test_retry_after_is_read(self, llm: Client, transport: Any, kind: ErrorKind, form: RetryAfterForm) -> None:
        """The wait a rate-limit or overloaded answer asks for is ``retry_after``, in each header form."""
        if kind in self.unsupported_error_kinds:
            pytest.xfail(self.unsupported_error_kinds[kind])
        began = time.monotonic()
        error = self._failure(llm, transport, FakeError(kind, "kit wait", retry_after=7, retry_after_form=form))
        took = time.monotonic() - began
        waited = getattr(error, "retry_after", None)
        if not self.reports_retry_after:
            assert waited is None, "a transport without a wait field must leave retry_after unset"
            return
        assert waited is not None, f"{kind} with a {form} Retry-After must set retry_after ({type(error).__name__})"
        # a date is a moment: what is left of its 7 s is less by the call's own time (a loaded machine's seconds)
        # and the date's truncation to a whole second
        least = min(5.0, 6.0 - took) if form == "http-date" else 5.0
        assert least - 1e-6 <= waited <= 7.0 + 1e-6, f"Retry-After: 7 s as {form} was read as {waited}"

    def test_unknown_errors_are_left_to_core(self, llm: Client) -> None:
        """``llmplex_classify_error`` returns None for exceptions it does not know."""
        provider = llm.route(self.spec).provider
        error = provider.hooks.classify_error(error=_KitUnknownError("kit"), settings=provider.settings)
        assert type(error) is LLMError, "an unknown exception must be left to core's fallback classifier"

    def test_retries_happen_in_core_only(self, llm: Client, transport: Any) -> None:
        """The SDK does not retry on its own: one 500 then one answer is two core attempts, two requests."""
        self.fake_error(transport, FakeError("server", "kit server failure"))
        self.fake_response(transport, self.reply("second time lucky"))
        retry_once = ThrottlePolicy(max_attempts=2, base_delay=0, max_delay=0)
        response = llm.complete(self.spec, "retry me", throttle=retry_once)
        assert (response.text, response.attempts) == ("second time lucky", 2)
        assert len(self.sent_payloads(transport)) == 2
