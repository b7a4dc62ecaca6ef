"""Anthropic's Message Batches API, checked against the anthropic SDK's own types.

Requests: ``BatchCreateParams`` (each ``params`` a ``MessageCreateParamsNonStreaming``)
with no key the SDK types lack. Responses: ``MessageBatch`` and each results line a
``MessageBatchIndividualResponse``, parsed by the SDK's models (with no top-level
key they lack), as in https://docs.anthropic.com/en/api/creating-message-batches,
/retrieving-message-batches and /retrieving-message-batch-results.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
from anthropic.types.messages.batch_create_params import BatchCreateParams
from pydantic import BaseModel

from tests.plugins.anthropic import wire
from tests.scaling.batch_server import Reply, answer_of, outcome_of, prompt_of

if TYPE_CHECKING:
    from tests.scaling.batch_server import BatchServer

__all__ = ["AnthropicBatches", "check_model"]

Json = dict[str, Any]
_PREFIX = "/v1/messages/batches"


def check_model(kind: type[BaseModel], body: Json) -> None:
    """Parse ``body`` with the SDK's model ``kind``; fail on a top-level key the model does not have."""
    kind.model_validate(body)
    unknown = set(body) - set(kind.model_fields)
    assert not unknown, f"keys {sorted(unknown)} are not fields of {kind.__name__}"


def _time(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class AnthropicBatches:
    """The state of the fake Anthropic workspace: its message batches."""

    def __init__(self, server: BatchServer) -> None:
        self.server = server
        self.batches: dict[str, Json] = {}
        self.requests: dict[str, list[Json]] = {}
        self.results: dict[str, bytes] = {}

    def route(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        if not headers.get("x-api-key") and not headers.get("authorization", "").startswith("Bearer "):
            return self._error(401, "authentication_error", "an API key is required")
        parts = path.removeprefix(_PREFIX).strip("/").split("/")
        if method == "POST" and parts == [""]:
            return self._create(body)
        if method == "GET" and len(parts) == 1 and parts[0] in self.batches:
            return self._retrieve(parts[0])
        if method == "GET" and len(parts) == 2 and parts[1] == "results" and parts[0] in self.results:
            return Reply(200, self.results[parts[0]], "application/binary")
        return self._error(404, "not_found_error", f"no route {method} {path}")

    def _error(self, status: int, kind: str, message: str) -> Reply:
        return Reply.json(wire.error_body(kind, message), status)

    def _reply(self, batch: Json) -> Reply:
        try:
            check_model(MessageBatch, batch)
        except (AssertionError, ValueError) as exc:
            return self.server.violation("fake response MessageBatch", exc)
        return Reply.json(batch)

    def _create(self, raw: bytes) -> Reply:
        request = json.loads(raw)
        try:
            wire.check_params(request, BatchCreateParams)
            ids = [item["custom_id"] for item in request["requests"]]
            assert len(set(ids)) == len(ids), "custom_id values repeat within the batch"
            assert all(1 <= len(i) <= 64 and i.replace("_", "").replace("-", "").isalnum() for i in ids), ids
        except (AssertionError, ValueError) as exc:
            return self.server.violation(f"POST {_PREFIX}", exc)
        self.server.created["anthropic"] += 1
        batch_id = f"msgbatch_{len(self.batches) + 1:04d}{self.server.random.getrandbits(48):012x}"
        now = datetime.now(UTC)
        self.requests[batch_id] = request["requests"]
        self.batches[batch_id] = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": {"processing": len(ids), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
            "ended_at": None,
            "created_at": _time(now),
            "expires_at": _time(now + timedelta(hours=24)),
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": None,
        }
        return self._reply(self.batches[batch_id])

    def _retrieve(self, batch_id: str) -> Reply:
        batch = self.batches[batch_id]
        if batch["processing_status"] == "in_progress" and self.server.should_finish(batch_id):
            self._finish(batch)
        return self._reply(batch)

    def _finish(self, batch: Json) -> None:
        lines = [self._result(item) for item in self.requests[batch["id"]]]
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for line in lines:
            check_model(MessageBatchIndividualResponse, line)
            counts[line["result"]["type"]] += 1
        self.results[batch["id"]] = b"".join(json.dumps(line).encode() + b"\n" for line in self.server.shuffled(lines))
        batch.update(
            processing_status="ended",
            request_counts=counts,
            ended_at=_time(datetime.now(UTC)),
            results_url=f"{self.server.base_url}{_PREFIX}/{batch['id']}/results",
        )

    def _result(self, item: Json) -> Json:
        prompt = prompt_of(item["params"])
        outcome = outcome_of(prompt)
        if outcome == "succeeded":
            usage = wire.usage(input_tokens=len(prompt), output_tokens=3)
            message = wire.message(
                [wire.text_block(answer_of(item["params"], prompt))], message_usage=usage, model=item["params"]["model"]
            )
            result: Json = {"type": "succeeded", "message": message}
        elif outcome in ("expired", "canceled"):
            result = {"type": outcome}
        else:
            result = {
                "type": "errored",
                "error": wire.error_body("invalid_request_error", "messages: the prompt was flagged"),
            }
        return {"custom_id": item["custom_id"], "result": result}
