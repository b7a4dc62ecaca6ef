"""llmplex-echo passes the llmplex conformance kit against the kit's local server speaking the echo API."""

from __future__ import annotations

from typing import Any

from llmplex.testing import (
    FakeError,
    HTTPConformanceTests,
    Received,
    Reply,
    SentMessage,
    SentRequest,
    WireAdapter,
    sse,
)

ERROR_TYPES = {"quota": "insufficient_quota", "rate_limit": "rate_limited", "authentication": "invalid_api_key"}


class EchoWire(WireAdapter):
    """The echo API: ``POST /v1/echo`` with ``{"model", "messages", "options"}``."""

    def response(self, reply: Reply) -> dict[str, Any]:
        usage = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens}
        finish = "length" if reply.finish == "length" else "stop"
        return {
            "id": reply.response_id,
            "model": reply.model,
            "text": reply.text,
            "usage": usage,
            "finish_reason": finish,
        }

    def stream(self, reply: Reply) -> list[bytes]:
        ids = {"id": reply.response_id, "model": reply.model}
        words = [word + " " for word in reply.text.split(" ")]
        words[-1] = words[-1][:-1]
        done = {**ids, "usage": self.response(reply)["usage"], "finish_reason": self.response(reply)["finish_reason"]}
        return [sse({**ids, "delta": word}) for word in words if word] + [sse(done, event="done")]

    def error_body(self, error: FakeError) -> dict[str, Any]:
        return {"error": {"type": ERROR_TYPES.get(error.kind, error.kind), "message": error.message}}

    def read_request(self, received: Received) -> SentRequest:
        body = received.json()
        turns = body["messages"]
        return SentRequest(
            model=body["model"],
            system=tuple(m["content"] for m in turns if m["role"] == "system"),
            messages=tuple(SentMessage(m["role"], m["content"]) for m in turns if m["role"] != "system"),
            options={k: list(v) if k == "stop" else v for k, v in body["options"].items()},
            stream=body.get("stream", False),
            raw=body,
        )


class TestEchoConformance(HTTPConformanceTests):
    prefix = "echo"
    model = "echo-1"
    wire = EchoWire()
    usage_fields = frozenset({"input_tokens", "output_tokens"})
    reports_refusals = False
    supports_streaming = True
    supports_async = True
