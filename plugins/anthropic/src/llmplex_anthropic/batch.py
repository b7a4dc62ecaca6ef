"""Anthropic's Message Batches API: create a batch of ``messages.create`` requests, poll it, read its results.

Results come back as ``MessageBatchIndividualResponse`` lines in any order,
matched by ``custom_id``. Message Batches carry no metadata, so a submission
cannot be looked up again: llmplex warns when it must submit one again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import anthropic
from anthropic.types.messages import MessageBatchIndividualResponse
from pydantic import ValidationError

from llmplex.errors import LLMServerError
from llmplex.types import BatchLimits, BatchOutcome, BatchRequest, BatchStatus
from llmplex_anthropic.errors import error_from_result
from llmplex_anthropic.settings import AnthropicSettings

__all__ = ["batch_limits", "batch_results", "poll_batch", "submit_batch"]

_COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")
"""The ``request_counts`` of a Message Batch, in the order progress shows them."""


def batch_limits(settings: AnthropicSettings) -> BatchLimits:
    """The instance's limits: 100,000 requests and 256 MB per batch unless its settings say less."""
    return BatchLimits(settings.batch_max_requests, settings.batch_max_bytes)


def submit_batch(client: anthropic.Anthropic, requests: Sequence[BatchRequest]) -> str:
    """Create one Message Batch of ``requests`` (``custom_id`` and ``params``); return its id."""
    batch = client.messages.batches.create(
        requests=[{"custom_id": r.custom_id, "params": dict(r.payload)} for r in requests]  # type: ignore[typeddict-item]
    )
    return batch.id


def poll_batch(client: anthropic.Anthropic, batch_id: str) -> BatchStatus:
    """The batch's ``processing_status`` and ``request_counts``; done once it has ``ended``."""
    batch = client.messages.batches.retrieve(batch_id)
    counts = {name: getattr(batch.request_counts, name) for name in _COUNTS}
    total = sum(counts.values())
    return BatchStatus(
        done=batch.processing_status == "ended",
        status=batch.processing_status,
        counts=counts,
        finished=total - counts.get("processing", 0),
        total=total,
    )


def batch_results(client: anthropic.Anthropic, batch_id: str) -> Iterator[BatchOutcome]:
    """Each result line: a ``Message``, the error it ended with, or that it expired or was canceled.

    Lines are read and validated one by one: a line that is not a valid result fails only its own
    request (an ``errored`` outcome when its ``custom_id`` can be read; else the request has no result),
    and the lines after it are still read.
    """
    decoder = client.messages.batches.results(batch_id)
    try:
        for line in decoder.http_response.iter_lines():
            if line.strip():
                outcome = _outcome(line)
                if outcome is not None:
                    yield outcome
    finally:
        decoder.close()


def _outcome(line: str) -> BatchOutcome | None:
    try:
        item = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to read: its request has no result
        return None
    try:
        parsed = MessageBatchIndividualResponse.model_validate(item)
    except ValueError as exc:  # a pydantic ValidationError: JSON, but not a result
        custom_id = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(custom_id, str):
            return None
        problem = f"{exc.error_count()} problem(s)" if isinstance(exc, ValidationError) else type(exc).__name__
        error = LLMServerError(f"the batch result line of this request could not be decoded ({problem}); send it again")
        return BatchOutcome(custom_id, "errored", error=error)
    result = parsed.result
    if result.type == "succeeded":
        return BatchOutcome(parsed.custom_id, "succeeded", raw=result.message)
    if result.type == "errored":
        body = result.error
        return BatchOutcome(
            parsed.custom_id, "errored", error=error_from_result(body.error.type, body.error.message, body.request_id)
        )
    return BatchOutcome(parsed.custom_id, result.type)
