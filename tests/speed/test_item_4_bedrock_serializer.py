"""Issue 34 item 4: Bedrock's lean ConverseStream request serialized by a serializer compiled once from the
operation's shapes (``llmplex_bedrock.serialize``) and its User-Agent built once per client: the request dict is
botocore's for every shape the plugin sends, anything botocore would convert or refuse goes to botocore (same
answer, same ``ParamValidationError``), and a user's ``modify_components`` still runs on every call."""

from __future__ import annotations

import datetime
import decimal
import io
import uuid
from collections.abc import Iterator
from typing import Any

import botocore.useragent
import httpx
import pytest
from botocore import auth as botocore_auth
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.request import format_request
from llmplex_bedrock.settings import BedrockSettings

from llmplex.http import sync_client
from llmplex.types import LLMConfig, Message, Request, Tool, ToolCall
from llmplex.types.parts import Document, Image
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
TEXT = [{"role": "user", "content": [{"text": "hi"}]}]
PNG = b"\x89PNG\r\n\x1a\n\x00\xff"


@pytest.fixture(scope="module")
def lean() -> Iterator[bedrock_direct.LeanRequest]:
    settings = BedrockSettings(
        region="eu-west-3", endpoint_url="http://127.0.0.1:9", aws_access_key_id="AKIDSERIAL", aws_secret_access_key="s"
    )
    client = create_client(settings)
    prepared = bedrock_direct.lean_request(client)
    assert prepared is not None and prepared.serialize.compiled
    yield prepared
    close_client(client)


def _plugin_requests() -> dict[str, Request]:
    tool = Tool(name="add", description="adds", parameters={"type": "object", "properties": {"a": {"type": "number"}}})
    call = ToolCall(id="t1", name="add", arguments='{"a": 1.5}')
    image = Image(media_type="image/png", data=PNG)
    document = Document(media_type="application/pdf", data=b"%PDF-1.4 notes", name="my notes.pdf")
    return {
        "text": Request(model=MODEL, messages=(Message(role="user", content="hi"),)),
        "system": Request(
            model=MODEL, messages=(Message(role="system", content="be brief"), Message(role="user", content="hi"))
        ),
        "images and documents": Request(
            model=MODEL, messages=(Message(role="user", content=("look", image, document)),)
        ),
        "inference config": Request(
            model=MODEL,
            messages=(Message(role="user", content="hi"),),
            config=LLMConfig(temperature=0.5, top_p=1, max_tokens=7, stop=("\n",)),
        ),
        "tools": Request(
            model=MODEL,
            messages=(
                Message(role="user", content="add"),
                Message(role="assistant", content="", tool_calls=(call,)),
                Message(role="tool", content="2.5", tool_call_id="t1"),
            ),
            tools=(tool,),
            tool_choice="add",
        ),
        "additional fields": Request(
            model=MODEL,
            messages=(Message(role="user", content="hi"),),
            provider_options={
                "additionalModelRequestFields": {"top_k": 5, "big": 12345678901234567890, "x": [None, 1.5, True]},
                "additionalModelResponseFieldPaths": ["/stop_sequence"],
                "requestMetadata": {"team": "a"},
                "performanceConfig": {"latency": "optimized"},
            },
        ),
    }


def _botocores(lean: bedrock_direct.LeanRequest, params: Any) -> Any:
    try:
        return lean.client._serializer.serialize_to_request(params, lean.operation)
    except Exception as error:
        return (type(error), str(error))


def _leans(lean: bedrock_direct.LeanRequest, params: Any) -> Any:
    try:
        return lean.serialize(params)
    except Exception as error:
        return (type(error), str(error))


@pytest.mark.parametrize("shape", list(_plugin_requests()))
def test_item_4_bedrock_plugin_shapes_are_boto3s_at_the_transport(
    shape: str, lean: bedrock_direct.LeanRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request shape the plugin formats reaches httpx as boto3's own ``converse_stream`` sends it (a fixed clock
    and uuid): method, URL, every header in order, the body."""
    monkeypatch.setattr(
        botocore_auth, "get_current_datetime", lambda: datetime.datetime(2026, 12, 3, tzinfo=datetime.UTC)
    )
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=34))
    sent: list[tuple[str, str, list[tuple[bytes, bytes]], bytes]] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append((request.method, str(request.url), list(request.headers.raw), request.read()))
        return httpx.Response(200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=b"")

    sender = sender_of(lean.client)
    assert sender is not None
    monkeypatch.setattr(sender, "http", sync_client(httpx, transport=httpx.MockTransport(record)))
    payload = format_request(_plugin_requests()[shape], BedrockSettings(region="eu-west-3"))
    lean.client.converse_stream(**payload)
    bedrock_hooks._open(lean, payload).close()
    assert len(sent) == 2 and sent[0] == sent[1]


@pytest.mark.parametrize("shape", list(_plugin_requests()))
def test_item_4_bedrock_serializer_gives_botocores_request_without_botocore(
    shape: str, lean: bedrock_direct.LeanRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request shape the plugin formats is serialized as botocore serializes it, without its serializer."""
    payload = format_request(_plugin_requests()[shape], BedrockSettings(region="eu-west-3"))
    expected = _botocores(lean, payload)
    called: list[str] = []
    serializer = lean.client._serializer

    def spy(*args: Any) -> Any:
        called.append("botocore")
        return serializer.serialize_to_request(*args)

    monkeypatch.setattr(lean.client, "_serializer", type("Spy", (), {"serialize_to_request": staticmethod(spy)})())
    assert lean.build(payload).body == expected["body"]
    assert lean.serialize(payload) == expected
    assert called == []


HOSTILE: dict[str, dict[str, Any]] = {
    "tuples for lists": {"modelId": MODEL, "messages": ({"role": "user", "content": ({"text": "hi"},)},)},
    "a text blob and a bytearray": {
        "modelId": MODEL,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"image": {"format": "png", "source": {"bytes": "é text"}}},
                    {"image": {"format": "png", "source": {"bytes": bytearray(PNG)}}},
                ],
            }
        ],
    },
    "an integer for a float": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"temperature": 1}},
    "a huge integer for a float": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"temperature": 10**400}},
    "infinity": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"temperature": float("inf")}},
    "not a number": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"topP": float("nan")}},
    "a Decimal": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"temperature": decimal.Decimal("0.3")}},
    "a bool for an integer": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"maxTokens": True}},
    "below the minimum": {"modelId": MODEL, "messages": TEXT, "inferenceConfig": {"maxTokens": 0}},
    "an empty model id": {"modelId": "", "messages": TEXT},
    "a None member": {"modelId": MODEL, "messages": TEXT, "system": None},
    "a None document": {"modelId": MODEL, "messages": TEXT, "additionalModelRequestFields": None},
    "a nested None": {"modelId": MODEL, "messages": [{"role": "user", "content": [{"text": None}]}]},
    "a tuple in a document": {"modelId": MODEL, "messages": TEXT, "additionalModelRequestFields": {"a": (1,)}},
    "a set in a document": {"modelId": MODEL, "messages": TEXT, "additionalModelRequestFields": {"a": {1}}},
    "an unknown key": {"modelId": MODEL, "messages": TEXT, "temperature": 1},
    "an unknown nested key": {"modelId": MODEL, "messages": [{"role": "user", "content": [{"txt": "hi"}]}]},
    "no model": {"messages": TEXT},
    "no tools in a tool config": {"modelId": MODEL, "messages": TEXT, "toolConfig": {}},
    "two union members": {"modelId": MODEL, "messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]},
    "an empty union": {"modelId": MODEL, "messages": [{"role": "user", "content": [{}]}]},
    "a string for a list": {"modelId": MODEL, "messages": "hi"},
    "a number for a string": {"modelId": MODEL, "messages": [{"role": "user", "content": [{"text": 3}]}]},
    "a file-like blob": {
        "modelId": MODEL,
        "messages": [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": io.BytesIO(PNG)}}}]}],
    },
    "a recursive document": {"modelId": MODEL, "messages": TEXT},
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_item_4_bedrock_serializer_answers_or_refuses_as_botocore(case: str, lean: bedrock_direct.LeanRequest) -> None:
    """Values botocore converts, refuses or walks its own way give its answer or its error, exactly."""
    params = HOSTILE[case]
    if case == "a recursive document":
        loop: dict[str, Any] = {}
        loop["self"] = loop
        params = {**params, "additionalModelRequestFields": loop}
    assert _leans(lean, params) == _botocores(lean, params)


def test_item_4_bedrock_user_agent_is_built_once_per_client(
    lean: bedrock_direct.LeanRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The User-Agent is botocore's, built once per client; a ``modify_components`` of the user's runs each call."""
    creator = lean.client._user_agent_creator
    expected = creator.to_string()
    built: list[str] = []
    original = type(creator).to_string

    def counted(self: Any) -> Any:
        built.append("ua")
        return original(self)

    monkeypatch.setattr(type(creator), "to_string", counted)
    lean.agents.clear()
    payload = {"modelId": MODEL, "messages": TEXT}
    agents = [lean.build(payload).headers["User-Agent"] for _ in range(3)]
    assert agents == [expected.encode()] * 3 and built == ["ua"]

    def modify(components: list[Any]) -> list[Any]:
        return components

    monkeypatch.setattr(botocore.useragent, "modify_components", modify)
    for _ in range(2):
        lean.build(payload)
    assert built == ["ua", "ua", "ua"]
