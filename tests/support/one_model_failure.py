"""A one-model call that fails on both its attempts, and what its error and the release order must then be: what
the one-model call and stream tests of issue 34 (items 3 and 5) check, sync and async, against the unchanged sync
path."""

from __future__ import annotations

from typing import Any

import llmplex
from llmplex import LLMRateLimitError
from llmplex.engine.retrier import FailedAttempt


def fail_twice(client: llmplex.Client) -> dict[str, Any]:
    """Make the mock provider refuse the next two requests; the throttle that tries twice, at once."""
    backend = client.provider_client("mock")
    for _ in range(2):
        backend.push_error(LLMRateLimitError("slow down", retry_after=0))
    return {"max_attempts": 2}


def assert_failed_as_the_call(error: LLMRateLimitError, closed: list[str]) -> None:
    """The call's error holds both attempts; the call was told it failed, then its route released, once."""
    assert error.attempts == 2
    assert [(f.model, f.attempt) for f in error.context["errors"]] == [("mock:m", 1), ("mock:m", 2)]
    assert all(type(f) is FailedAttempt for f in error.context["errors"])
    assert closed[-3:] == ["RequestFailed", "CallEnded", "close"]  # told, then released
    assert closed.count("close") == 1
