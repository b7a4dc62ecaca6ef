"""OpenAI's Files API (purpose ``batch``) and Batch API, checked against the vendored OpenAPI spec.

Requests: ``CreateFileRequest`` (multipart), ``CreateBatchRequest``, every input
line as the documented batch input line with its ``body`` a
``CreateChatCompletionRequest`` or ``CreateResponse``. Responses: ``OpenAIFile``,
``Batch``, ``ListBatchesResponse``, error bodies as ``ErrorResponse``, and every
output/error file line as the documented batch output line whose ``body`` is a
``CreateChatCompletionResponse`` or ``Response``.
"""

from __future__ import annotations

import email.parser
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator

from tests.contract import fixtures_openai as fx
from tests.contract.openapi import validate_openai
from tests.scaling.batch_server import Reply, answer_of, outcome_of, prompt_of

if TYPE_CHECKING:
    from tests.scaling.batch_server import BatchServer

__all__ = ["BATCH_INPUT_LINE", "BATCH_OUTPUT_LINE", "OpenAIBatches"]

Json = dict[str, Any]
_BODIES = {
    "/v1/chat/completions": ("CreateChatCompletionRequest", "CreateChatCompletionResponse"),
    "/v1/responses": ("CreateResponse", "Response"),
}
# The per-line objects of batch files, as the API reference documents them (the vendored
# spec revision no longer carries them as components): /docs/api-reference/batch/request-input
# and /docs/api-reference/batch/request-output.
BATCH_INPUT_LINE: Json = {
    "type": "object",
    "properties": {
        "custom_id": {"type": "string"},
        "method": {"const": "POST"},
        "url": {"enum": list(_BODIES)},
        "body": {"type": "object"},
    },
    "required": ["custom_id", "method", "url", "body"],
    "additionalProperties": False,
}
BATCH_OUTPUT_LINE: Json = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "custom_id": {"type": "string"},
        "response": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "status_code": {"type": "integer"},
                        "request_id": {"type": "string"},
                        "body": {"type": "object"},
                    },
                    "required": ["status_code", "request_id", "body"],
                },
                {"type": "null"},
            ]
        },
        "error": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                    "required": ["code", "message"],
                },
                {"type": "null"},
            ]
        },
    },
    "required": ["id", "custom_id", "response", "error"],
    "additionalProperties": False,
}
_NOT_RUN = {
    "expired": ("batch_expired", "This request could not be executed before the completion window expired."),
    "canceled": ("batch_cancelled", "This request was not executed because the batch was cancelled."),
}


def _check(schema: Json, instance: object) -> None:
    errors = list(Draft202012Validator(schema).iter_errors(instance))
    if errors:
        raise AssertionError("; ".join(f"{e.json_path}: {e.message}" for e in errors))


class OpenAIBatches:
    """The state of the fake OpenAI account: files and batches."""

    def __init__(self, server: BatchServer) -> None:
        self.server = server
        self.files: dict[str, bytes] = {}
        self.file_objects: dict[str, Json] = {}
        self.batches: dict[str, Json] = {}
        self.inputs: dict[str, list[Json]] = {}

    # -- routing -------------------------------------------------------------------

    def route(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        url = urlsplit(path)
        parts = url.path.strip("/").split("/")
        if method == "POST" and url.path == "/v1/files":
            return self._upload(body, headers.get("content-type", ""))
        if method == "POST" and url.path == "/v1/batches":
            return self._create(body)
        if method == "GET" and url.path == "/v1/batches":
            return self._list()
        if method == "GET" and len(parts) == 3 and parts[:2] == ["v1", "batches"]:
            return self._retrieve(parts[2])
        if method == "GET" and len(parts) == 4 and parts[:2] == ["v1", "files"] and parts[3] == "content":
            return self._content(parts[2])
        return self._error(404, f"no route {method} {url.path}", "invalid_request_error")

    def _error(self, status: int, message: str, kind: str) -> Reply:
        body = fx.error_body(message, kind)
        validate_openai("ErrorResponse", body)
        return Reply.json(body, status)

    def _reply(self, schema: str, body: Json) -> Reply:
        try:
            validate_openai(schema, body)
        except AssertionError as exc:
            return self.server.violation(f"fake response {schema}", exc)
        return Reply.json(body)

    # -- files ---------------------------------------------------------------------

    def _upload(self, body: bytes, content_type: str) -> Reply:
        message = email.parser.BytesParser().parsebytes(b"content-type: " + content_type.encode() + b"\r\n\r\n" + body)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.get_payload()}
        file_part, purpose_part = fields.get("file"), fields.get("purpose")
        purpose = purpose_part.get_payload(decode=True).decode() if purpose_part is not None else None
        try:
            validate_openai("CreateFileRequest", {"file": "(binary)", "purpose": purpose} if file_part else {})
            assert purpose == "batch", f"purpose {purpose!r} is not 'batch'"
        except AssertionError as exc:
            return self.server.violation("POST /v1/files", exc)
        content = file_part.get_payload(decode=True)
        file_id = f"file-{len(self.files) + 1:06d}"
        self.files[file_id] = content
        self.file_objects[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": file_part.get_filename(),
            "purpose": "batch",
            "status": "processed",
        }
        return self._reply("OpenAIFile", self.file_objects[file_id])

    def _content(self, file_id: str) -> Reply:
        if file_id not in self.files:
            return self._error(404, f"No such File object: {file_id}", "invalid_request_error")
        return Reply(200, self.files[file_id], "application/octet-stream")

    # -- batches -------------------------------------------------------------------

    def _create(self, raw: bytes) -> Reply:
        request = json.loads(raw)
        try:
            validate_openai("CreateBatchRequest", request)
            lines = self._input_lines(request)
        except AssertionError as exc:
            return self.server.violation("POST /v1/batches", exc)
        self.server.created["openai"] += 1
        batch_id = f"batch_{len(self.batches) + 1:04d}{self.server.random.getrandbits(32):08x}"
        now = int(time.time())
        self.inputs[batch_id] = lines
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": request["endpoint"],
            "model": lines[0]["body"]["model"],
            "input_file_id": request["input_file_id"],
            "completion_window": "24h",
            "status": "validating",
            "created_at": now,
            "expires_at": now + 86400,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": request.get("metadata") or {},
        }
        return self._reply("Batch", self.batches[batch_id])

    def _input_lines(self, request: Json) -> list[Json]:
        """Every line of the input file, checked: shape, endpoint, body schema, unique ids, one model."""
        content = self.files.get(request["input_file_id"])
        assert content is not None, f"input_file_id {request['input_file_id']} was never uploaded"
        assert content.endswith(b"\n"), "the input file does not end with a newline"
        lines = [json.loads(line) for line in content.decode("utf-8").splitlines()]
        assert lines, "the input file is empty"
        request_schema = _BODIES[request["endpoint"]][0]
        for line in lines:
            _check(BATCH_INPUT_LINE, line)
            assert line["url"] == request["endpoint"], f"line url {line['url']} is not the batch endpoint"
            validate_openai(request_schema, line["body"])
        ids = [line["custom_id"] for line in lines]
        assert len(set(ids)) == len(ids), "custom_id values repeat within the batch"
        assert len({line["body"]["model"] for line in lines}) == 1, "a batch may hold requests to one model only"
        return lines

    def _retrieve(self, batch_id: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._error(404, f"No batch found with id '{batch_id}'.", "invalid_request_error")
        if batch["status"] == "validating":
            batch.update(status="in_progress", in_progress_at=int(time.time()))
        elif batch["status"] == "in_progress" and self.server.should_finish(batch_id):
            self._finish(batch)
        return self._reply("Batch", batch)

    def _list(self) -> Reply:
        data = sorted(self.batches.values(), key=lambda b: b["id"], reverse=True)
        page: Json = {"object": "list", "data": data, "has_more": False}
        if data:
            page.update(first_id=data[0]["id"], last_id=data[-1]["id"])
        return self._reply("ListBatchesResponse", page)

    def _finish(self, batch: Json) -> None:
        lines = self.inputs[batch["id"]]
        outcomes = [outcome_of(prompt_of(line["body"])) for line in lines]
        now = int(time.time())
        if "rejected" in outcomes:
            line = outcomes.index("rejected") + 1
            error = {"code": "invalid_request", "message": "The request is not valid for this model.", "param": None}
            batch.update(status="failed", failed_at=now, errors={"object": "list", "data": [{**error, "line": line}]})
            return
        output = [self._output_line(line, outcome) for line, outcome in zip(lines, outcomes, strict=True)]
        good = [entry for entry in output if entry["response"] and entry["response"]["status_code"] == 200]
        bad = [entry for entry in output if entry not in good]
        for name, entries in (("output_file_id", good), ("error_file_id", bad)):
            if entries:
                batch[name] = self._store_output(self.server.shuffled(entries), batch["endpoint"])
        status = "expired" if "expired" in outcomes else "cancelled" if "canceled" in outcomes else "completed"
        batch.update(
            status=status,
            finalizing_at=now,
            request_counts={"total": len(lines), "completed": len(good), "failed": len(bad)},
            **{f"{status}_at": now},
        )

    def _output_line(self, line: Json, outcome: str) -> Json:
        entry: Json = {"id": f"batch_req_{line['custom_id']}", "custom_id": line["custom_id"], "response": None}
        prompt = prompt_of(line["body"])
        if outcome in _NOT_RUN:
            code, message = _NOT_RUN[outcome]
            return {**entry, "error": {"code": code, "message": message}}
        if outcome == "errored":
            body = fx.error_body(
                "Invalid 'messages': the prompt was flagged.", "invalid_request_error", code="invalid_value"
            )
            return {**entry, "response": {"status_code": 400, "request_id": "req_400", "body": body}, "error": None}
        usage = fx.TokenUsage(input_tokens=len(prompt), output_tokens=3)
        text = answer_of(line["body"], prompt)
        model = line["body"]["model"]
        if line["url"] == "/v1/chat/completions":
            body = fx.chat_completion(text, usage=usage, model=model)
        else:
            body = {**fx.response_text(text, usage), "model": model}
        return {**entry, "response": {"status_code": 200, "request_id": "req_200", "body": body}, "error": None}

    def _store_output(self, entries: list[Json], endpoint: str) -> str:
        for entry in entries:
            _check(BATCH_OUTPUT_LINE, entry)
            response = entry["response"]
            if response and response["status_code"] == 200:
                validate_openai(_BODIES[endpoint][1], response["body"])
            elif response:
                validate_openai("ErrorResponse", response["body"])
        file_id = f"file-{len(self.files) + 1:06d}"
        self.files[file_id] = b"".join(json.dumps(entry).encode() + b"\n" for entry in entries)
        return file_id
