"""OpenAI's Batch API: the requests as a JSONL file (Files API, purpose ``batch``), one batch per file.

A batch runs on the endpoint of the instance's API (``/v1/chat/completions`` or
``/v1/responses``); its results come back in an output file (answers) and an
error file (failed, expired and canceled requests), matched by ``custom_id``.
The submission's label is kept in the batch's metadata, so an interrupted
submission can be found again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from openai import OpenAI
from openai.types import Batch
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as OpenAIResponse

from llmplex.errors import LLMAPIError
from llmplex.types import BatchLimits, BatchOutcome, BatchRequest, BatchStatus
from llmplex.types.batch import OutcomeKind
from llmplex_openai.errors import error_from_api
from llmplex_openai.settings import OpenAISettings

__all__ = [
    "ENDPOINTS",
    "LABEL_KEY",
    "batch_limits",
    "batch_results",
    "find_batch",
    "input_line",
    "poll_batch",
    "submit_batch",
]

ENDPOINTS = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
"""The batch endpoint of each API an instance may speak."""
LABEL_KEY = "llmplex_label"
"""The metadata key holding the submission's label."""

_DONE = frozenset({"completed", "failed", "expired", "cancelled"})
_NOT_RUN: dict[str, OutcomeKind] = {"batch_expired": "expired", "batch_cancelled": "canceled"}
_BODY_TYPES: dict[str, type[ChatCompletion] | type[OpenAIResponse]] = {
    "/v1/chat/completions": ChatCompletion,
    "/v1/responses": OpenAIResponse,
}


def batch_limits(settings: OpenAISettings) -> BatchLimits:
    """The instance's limits: 50,000 requests and 200 MB per batch unless its settings say less."""
    return BatchLimits(settings.batch_max_requests, settings.batch_max_bytes)


def input_line(request: BatchRequest, endpoint: str) -> bytes:
    """One line of the batch input file (``custom_id``, ``method``, ``url``, ``body``)."""
    line = {"custom_id": request.custom_id, "method": "POST", "url": endpoint, "body": dict(request.payload)}
    return json.dumps(line, separators=(",", ":")).encode("ascii") + b"\n"


def submit_batch(client: OpenAI, requests: Sequence[BatchRequest], label: str, settings: OpenAISettings) -> str:
    """Upload the input file and create a 24-hour batch for it; return the batch id."""
    endpoint = ENDPOINTS[settings.effective_api]
    content = b"".join(input_line(request, endpoint) for request in requests)
    uploaded = client.files.create(file=(f"{label}.jsonl", content, "application/jsonl"), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id,
        endpoint=endpoint,  # type: ignore[arg-type]
        completion_window="24h",
        metadata={LABEL_KEY: label},
    )
    return batch.id


def find_batch(client: OpenAI, label: str) -> str | None:
    """The id of the batch whose metadata carries ``label`` (newest first), or ``None``."""
    for batch in client.batches.list(limit=100):
        if (batch.metadata or {}).get(LABEL_KEY) == label:
            return batch.id
    return None


def poll_batch(client: OpenAI, batch_id: str) -> BatchStatus:
    """The batch's status and its ``request_counts`` (total, completed, failed)."""
    batch = client.batches.retrieve(batch_id)
    counts = batch.request_counts
    error = _batch_errors(batch) if batch.status == "failed" else None
    if counts is None:
        return BatchStatus(done=batch.status in _DONE, status=batch.status, error=error)
    return BatchStatus(
        done=batch.status in _DONE,
        status=batch.status,
        counts={"total": counts.total, "completed": counts.completed, "failed": counts.failed},
        finished=counts.completed + counts.failed,
        total=counts.total,
        error=error,
    )


def _batch_errors(batch: Batch) -> str:
    errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
    described = [f"{e.message or e.code}" + (f" (line {e.line})" if e.line is not None else "") for e in errors[:5]]
    return "; ".join(described) or "the batch failed without saying why"


def batch_results(client: OpenAI, batch_id: str) -> Iterator[BatchOutcome]:
    """Each line of the output file, then of the error file, as an outcome; lines that name no request are skipped."""
    batch = client.batches.retrieve(batch_id)
    body_type = _BODY_TYPES.get(batch.endpoint, ChatCompletion)
    for file_id in (batch.output_file_id, batch.error_file_id):
        if not file_id:
            continue
        with client.files.with_streaming_response.content(file_id) as content:
            for line in content.iter_lines():
                outcome = _outcome(line, body_type)
                if outcome is not None:
                    yield outcome


def _outcome(line: str, body_type: type[ChatCompletion] | type[OpenAIResponse]) -> BatchOutcome | None:
    try:
        item = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to read: its request has no result
        return None
    if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
        return None
    custom_id = item["custom_id"]
    error, response = item.get("error"), item.get("response")
    if isinstance(error, dict):
        code = _text(error.get("code"))
        if code in _NOT_RUN:
            return BatchOutcome(custom_id, _NOT_RUN[code])
        message = _text(error.get("message")) or "the request failed"
        return BatchOutcome(custom_id, "errored", error=error_from_api(message, code=code, response_body=error))
    if not isinstance(response, dict):
        message = "the batch output line has neither a response nor an error"
        return BatchOutcome(custom_id, "errored", error=error_from_api(message, code="server_error"))
    status, body = response.get("status_code"), response.get("body")
    if status == 200 and isinstance(body, dict):
        return BatchOutcome(custom_id, "succeeded", raw=body_type.construct(**body))
    return BatchOutcome(custom_id, "errored", error=_status_error(status, body, _text(response.get("request_id"))))


def _status_error(status: Any, body: Any, request_id: str | None) -> LLMAPIError:
    details: Any = body.get("error") if isinstance(body, dict) else None
    details = details if isinstance(details, dict) else {}
    return error_from_api(
        _text(details.get("message")) or f"the request failed with HTTP status {status}",
        code=_text(details.get("code")),
        kind=_text(details.get("type")),
        status=status if isinstance(status, int) else None,
        response_body=body,
        request_id=request_id,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
