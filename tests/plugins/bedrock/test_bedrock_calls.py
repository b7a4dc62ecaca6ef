"""The bedrock plugin at the wire: SigV4 by botocore, the AWS credential chain, Bedrock's errors, parts and money.

Every test points boto3 at a local ``WireServer`` shaped like the Bedrock runtime
API (``endpoint_url``); nothing mocks boto3's methods. The conftest turns the
instance-metadata lookup off and hides the user's AWS files.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from llmplex import Client, Message
from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
)
from llmplex.testing import Reply
from llmplex.testing.server import Answer, WireServer
from llmplex.types import Document, Image, ToolCall, Usage
from tests.plugins.bedrock.wire import converse_body, event_frame, exception_frame, stream_frames
from tests.support.cli import run_llmplex, squashed

KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _client(server: WireServer, **settings: Any) -> Client:
    table = {"endpoint_url": server.url, "region": "eu-west-3", **settings}
    return Client(providers={"bedrock": table}, throttle={"max_attempts": 1})


def _keys() -> dict[str, str]:
    return {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}


def _error(server: WireServer, status: int, name: str, message: str) -> None:
    server.push(Answer.json(status, {"message": message}, {"x-amzn-ErrorType": f"{name}:http://internal.amazon.com/"}))


def test_item_4_requests_are_sigv4_signed_by_botocore_for_the_configured_region(server: WireServer) -> None:
    server.push(Answer.json(200, converse_body(Reply("signed"))))
    with _client(server, **_keys()) as llm:
        assert llm.complete(f"bedrock:{HAIKU}", "hi").text == "signed"
    (received,) = server.received
    assert received.path == f"/model/{HAIKU.replace(':', '%3A')}/converse"
    authorization = received.headers["authorization"]
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
    assert "/eu-west-3/bedrock/aws4_request" in authorization
    assert "x-amz-date" in received.headers
    assert SECRET not in str(received.headers) and SECRET.encode() not in received.body


def test_item_4_credentials_come_from_the_aws_chain_without_config(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key in config: the environment's credentials (one link of the chain) sign the request."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIACHAINEXAMPLE0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "chain-secret-never-shown")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "chain-session-token")
    server.push(Answer.json(200, converse_body(Reply("from the chain"))))
    with _client(server) as llm:
        assert llm.complete(f"bedrock:{HAIKU}", "hi").text == "from the chain"
    headers = server.received[0].headers
    assert "Credential=AKIACHAINEXAMPLE0001/" in headers["authorization"]
    assert headers["x-amz-security-token"] == "chain-session-token"


def test_item_4_no_credentials_anywhere_is_a_configuration_error_and_nothing_is_sent(server: WireServer) -> None:
    with _client(server) as llm, pytest.raises(LLMConfigurationError, match="credential"):
        llm.complete(f"bedrock:{HAIKU}", "hi")
    assert server.received == []


def test_item_4_explicit_keys_never_appear_in_reprs_or_errors(server: WireServer) -> None:
    """A hostile endpoint echoes the signature and the secret into its error: neither reaches the caller."""
    _error(server, 403, "UnrecognizedClientException", f"bad signature for secret {SECRET}")
    with _client(server, **_keys()) as llm:
        provider = llm.route(f"bedrock:{HAIKU}").provider
        assert SECRET not in repr(provider.settings)
        with pytest.raises(LLMAuthenticationError) as info:
            llm.complete(f"bedrock:{HAIKU}", "hi")
    chain = [info.value, info.value.__cause__]
    assert all(SECRET not in repr(error) and SECRET not in str(error) for error in chain if error is not None)


@pytest.mark.parametrize(
    ("status", "name", "expected", "retryable"),
    [
        (429, "ThrottlingException", LLMRateLimitError, True),
        (400, "ServiceQuotaExceededException", LLMQuotaExhaustedError, False),
        (400, "ValidationException", LLMBadRequestError, False),
        (403, "AccessDeniedException", LLMAuthenticationError, False),
        (404, "ResourceNotFoundException", LLMBadRequestError, False),
        (424, "ModelErrorException", LLMServerError, True),
        (408, "ModelTimeoutException", LLMServerError, True),
        (429, "ModelNotReadyException", LLMServerError, True),
        (503, "ServiceUnavailableException", LLMServerError, True),
    ],
)
def test_item_4_bedrock_errors_are_classified_by_their_documented_names(
    server: WireServer, status: int, name: str, expected: type[Exception], retryable: bool
) -> None:
    _error(server, status, name, f"{name} from the fake runtime")
    with _client(server, **_keys()) as llm, pytest.raises(expected) as info:
        llm.complete(f"bedrock:{HAIKU}", "hi")
    assert info.value.retryable is retryable
    assert info.value.status_code == status  # type: ignore[attr-defined]
    assert name in str(info.value)


def test_item_4_throttling_is_retried_by_core_once_not_by_botocore(server: WireServer) -> None:
    _error(server, 429, "ThrottlingException", "Too many requests, please wait before trying again.")
    server.push(Answer.json(200, converse_body(Reply("after the wait"))))
    with Client(providers={"bedrock": {"endpoint_url": server.url, **_keys()}}) as llm:
        response = llm.complete(f"bedrock:{HAIKU}", "hi", throttle={"max_attempts": 2, "base_delay": 0})
    assert (response.text, response.attempts, len(server.received)) == ("after the wait", 2, 2)


@pytest.mark.parametrize(
    ("exception", "expected"),
    [("throttlingException", LLMRateLimitError), ("modelStreamErrorException", LLMServerError)],
)
def test_item_4_an_exception_inside_the_event_stream_is_typed(
    server: WireServer, exception: str, expected: type[Exception]
) -> None:
    frames = [
        event_frame("messageStart", {"role": "assistant"}),
        event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "half"}}),
        exception_frame(exception, "the stream broke"),
    ]
    server.push(Answer.stream(frames, "application/vnd.amazon.eventstream"))
    with _client(server, **_keys()) as llm, pytest.raises(expected):
        list(llm.stream(f"bedrock:{HAIKU}", "hi"))


def test_item_4_a_guardrail_intervention_is_a_refusal(server: WireServer) -> None:
    server.push(Answer.json(200, converse_body(Reply(refusal="Sorry, the model cannot answer this question."))))
    with _client(server, **_keys()) as llm, pytest.raises(LLMRefusalError, match="guardrail_intervened"):
        llm.complete(f"bedrock:{HAIKU}", "hi")


def test_item_4_images_and_documents_go_as_bytes_with_their_formats(server: WireServer) -> None:
    server.push(Answer.json(200, converse_body(Reply("a red pixel and a memo"))))
    parts = [
        "What are these?",
        Image(data=PNG, media_type="image/png"),
        Document(data=b"%PDF-1.4 memo", media_type="application/pdf", name="memo: Q3 (final).pdf"),
    ]
    with _client(server, **_keys()) as llm:
        assert llm.complete(f"bedrock:{HAIKU}", [Message.user(parts)]).text == "a red pixel and a memo"
    (turn,) = server.received[0].json()["messages"]
    text, image, document = turn["content"]
    assert text == {"text": "What are these?"}
    assert image == {"image": {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}}
    assert document["document"]["format"] == "pdf"
    assert document["document"]["name"] == "memo Q3 (final) pdf"
    assert base64.b64decode(document["document"]["source"]["bytes"]) == b"%PDF-1.4 memo"


def test_item_4_an_image_by_url_is_refused_before_sending(server: WireServer) -> None:
    with _client(server, **_keys()) as llm, pytest.raises(LLMConfigurationError, match="by URL"):
        llm.complete(f"bedrock:{HAIKU}", [Message.user(["?", Image(url="https://example.com/a.png")])])
    assert server.received == []


def test_item_4_tools_round_trip_with_their_ids(server: WireServer) -> None:
    call = ToolCall(id="tooluse_kGv1hQ", name="get_weather", arguments='{"city": "Paris"}')
    server.push(Answer.json(200, converse_body(Reply(tool_calls=(call,)))))
    server.push(Answer.json(200, converse_body(Reply("It is 21C in Paris."))))

    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"21C in {city}"

    with _client(server, **_keys()) as llm:
        assert llm.complete(f"bedrock:{HAIKU}", "Weather in Paris?", tools=[get_weather]).text == "It is 21C in Paris."
    second = server.received[1].json()
    assert second["toolConfig"]["tools"][0]["toolSpec"]["name"] == "get_weather"
    assistant, result = second["messages"][1], second["messages"][2]
    assert assistant["content"][0]["toolUse"] == {
        "toolUseId": call.id,
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert result["content"][0]["toolResult"]["toolUseId"] == call.id


def test_item_4_inference_profiles_and_arns_reach_the_path_intact(server: WireServer) -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"
    for _ in range(2):
        server.push(Answer.json(200, converse_body(Reply("ok"))))
    with _client(server, **_keys()) as llm:
        llm.complete(f"bedrock:us.{HAIKU}", "hi")
        llm.complete(f"bedrock:{arn}", "hi")
    paths = [r.path for r in server.received]
    assert paths[0] == f"/model/us.{HAIKU.replace(':', '%3A')}/converse"
    assert paths[1].startswith("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2F")


def test_item_4_usage_counts_cache_reads_and_writes_inside_input_and_costs_the_published_price(
    server: WireServer,
) -> None:
    """Converse's ``inputTokens`` excludes cache reads and writes; core's input includes them, priced once each.

    Claude 3.5 Haiku on Bedrock (us-east-1, on-demand, AWS's pricing page): $0.80 per million input tokens,
    $4.00 per million output, cache writes $1.00 and cache reads $0.08 per million.
    """
    usage = Usage(input_tokens=3000, output_tokens=500, cached_tokens=2000, cache_write_tokens=400)
    reply = Reply("cached", usage=usage)
    server.push(Answer.json(200, converse_body(reply)))
    server.push(Answer.stream(stream_frames(reply), "application/vnd.amazon.eventstream"))
    with _client(server, **_keys()) as llm:
        whole = llm.complete(f"bedrock:{HAIKU}", "hi")
        streamed = list(llm.stream(f"bedrock:{HAIKU}", "hi"))[-1].response
    assert server.received[0].json().get("inferenceConfig") is None
    assert streamed is not None
    for answer in (whole, streamed):
        assert (answer.usage.input_tokens, answer.usage.cached_tokens, answer.usage.cache_write_tokens) == (
            3000,
            2000,
            400,
        )
        expected = (600 * Decimal("0.80") + 2000 * Decimal("0.08") + 400 * Decimal("1.00") + 500 * Decimal("4")) / (
            10**6
        )
        assert answer.usage.cost_usd == expected


def test_item_4_options_converse_does_not_take_are_refused_by_name(server: WireServer) -> None:
    with _client(server, **_keys()) as llm, pytest.raises(LLMConfigurationError, match="seed"):
        llm.complete(f"bedrock:{HAIKU}", "hi", seed=7)
    assert server.received == []


def test_item_6_bedrock_has_a_row_in_llmplex_providers(tmp_path: Path) -> None:
    """``llmplex providers --check`` imports the plugin and shows it ok, with its settings (no secret values)."""
    done = run_llmplex("providers", "--check", cwd=tmp_path, env={"AWS_EC2_METADATA_DISABLED": "true"})
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if "bedrock" in line)
    assert "ok" in row or "ok" in squashed(done.stdout), done.stdout
    assert "aws_secret_access_key" in done.stdout
