"""The bedrock plugin passes the conformance kit: real boto3 (SigV4, event streams) against the kit's local server."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from llmplex_bedrock import aio as bedrock_aio

from llmplex.client import Client
from llmplex.testing import FakeError, HTTPConformanceTests, WireAdapter
from llmplex.testing.server import Answer, WireServer
from tests.plugins.bedrock.wire import ERRORS, ConverseWire

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


class TestBedrockConformance(HTTPConformanceTests):
    prefix = "bedrock"
    model = MODEL
    wire: ClassVar[WireAdapter] = ConverseWire()
    settings: ClassVar[dict[str, Any]] = {"aws_access_key_id": "AKIAKITEXAMPLE0000", "region": "us-east-1"}
    secret_setting = "aws_secret_access_key"
    supports_tools = True
    supports_streaming = True
    reports_response_id = False  # Converse answers carry no id: the request id (x-amzn-RequestId) stands in
    usage_fields = frozenset({"input_tokens", "output_tokens", "cached_tokens"})  # no reasoning count on Converse
    input_parts = frozenset({"image", "document"})

    @pytest.fixture(autouse=True)
    def _client_built(self, llm: Client) -> None:
        """Each check starts with the instance's boto3 client built and the async sender's library imported (as a
        first call and a process's first async stream do): their 50-250 ms of CPU each (botocore's service data read
        per session; aiohttp) became 4-8 s on a loaded machine (load 13, 2 CPUs), inside the time the timeout checks
        allow a stalled call (0.5 + 3 s; 10 s), which failed them now and then. What they check, that each hook
        gives up at its timeout, is the same."""
        llm.route(self.spec).provider.client(False)
        bedrock_aio._clients()

    def server_settings(self, url: str) -> dict[str, Any]:
        return {"endpoint_url": url}

    def fake_error(self, transport: WireServer, error: FakeError) -> None:
        """Bedrock names the error in ``x-amzn-ErrorType`` beside a ``{"message"}`` body."""
        if error.kind not in ERRORS:
            super().fake_error(transport, error)
            return
        headers = {**error.headers(), "x-amzn-ErrorType": f"{ERRORS[error.kind]}:http://internal.amazon.com/"}
        transport.push(Answer.json(self.wire.error_status(error), self.wire.error_body(error), headers))
