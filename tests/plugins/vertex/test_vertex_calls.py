"""The vertex plugin at the wire: application default credentials, both families' URLs, per-model capabilities.

A service-account key file made here points its ``token_uri`` at the local server, so google-auth's real
JWT-bearer exchange runs; the conftest turns the metadata-server probe off.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from llmplex import Client
from llmplex.errors import LLMAuthenticationError, LLMConfigurationError
from llmplex.testing import Reply
from llmplex.testing.server import Answer, WireServer
from llmplex.types import Usage
from tests.plugins.anthropic.messages_wire import MessagesWire
from tests.plugins.gemini.generate_wire import GenerateWire
from tests.plugins.vertex.wire import path_model

CLAUDE = "claude-haiku-4-5@20251001"
GEMINI = "gemini-2.5-flash"
TOKEN = "ya29.vertex-test-token"


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _service_account(folder: Path, token_uri: str, project: str = "sa-project") -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    info = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": "kit0001",
        "private_key": pem.decode(),
        "client_email": f"llmplex-test@{project}.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    path = folder / "service-account.json"
    path.write_text(json.dumps(info))
    return path


def _token(server: WireServer) -> None:
    server.push(Answer.json(200, {"access_token": TOKEN, "expires_in": 3600, "token_type": "Bearer"}))


def _client(server: WireServer, **settings: Any) -> Client:
    table = {"base_url": server.url, "location": "us-east5", **settings}
    return Client(providers={"vertex": table}, throttle={"max_attempts": 1})


@pytest.mark.parametrize(
    ("model", "answer", "path"),
    [
        (GEMINI, GenerateWire(), f"/v1beta1/projects/sa-project/locations/us-east5/publishers/google/models/{GEMINI}"),
        (CLAUDE, MessagesWire(), f"/v1/projects/sa-project/locations/us-east5/publishers/anthropic/models/{CLAUDE}"),
    ],
)
def test_item_5_application_default_credentials_sign_both_families(
    server: WireServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, answer: Any, path: str
) -> None:
    """ADC from GOOGLE_APPLICATION_CREDENTIALS: the project comes from the key file, the token from its
    token endpoint (a JWT bearer grant), and each family goes to its own publisher's URL."""
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(_service_account(tmp_path, server.url + "/token")))
    _token(server)
    server.push(Answer.json(200, answer.response(Reply("hello from vertex"))))
    with _client(server) as llm:
        assert llm.complete(f"vertex:{model}", "hi").text == "hello from vertex"
    grant, call = server.received
    assert grant.path == "/token"
    assert b"urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer" in grant.body
    assert call.path.startswith(path + ":")
    assert path_model(call) == (model, "generateContent" if model == GEMINI else "rawPredict")
    assert call.headers["authorization"] == f"Bearer {TOKEN}"


def test_item_5_streams_use_each_familys_stream_method(server: WireServer) -> None:
    server.push(Answer.stream(GenerateWire().stream(Reply("one two")), "text/event-stream"))
    server.push(Answer.stream(MessagesWire().stream(Reply("three four")), "text/event-stream"))
    with _client(server, project="p", access_token=TOKEN) as llm:
        assert list(llm.stream(f"vertex:{GEMINI}", "hi"))[-1].response.text == "one two"  # type: ignore[union-attr]
        assert list(llm.stream(f"vertex:{CLAUDE}", "hi"))[-1].response.text == "three four"  # type: ignore[union-attr]
    methods = [path_model(r)[1] for r in server.received]
    assert methods == ["streamGenerateContent", "streamRawPredict"]


def test_item_5_no_credentials_is_a_configuration_error_naming_the_fix(server: WireServer) -> None:
    with _client(server, project="p") as llm, pytest.raises(LLMConfigurationError, match="application-default"):
        llm.complete(f"vertex:{GEMINI}", "hi")
    assert server.received == []


def test_item_5_no_project_is_a_configuration_error(server: WireServer) -> None:
    with _client(server, access_token=TOKEN) as llm, pytest.raises(LLMConfigurationError, match="GOOGLE_CLOUD_PROJECT"):
        llm.complete(f"vertex:{CLAUDE}", "hi")
    assert server.received == []


def test_item_5_each_family_is_held_to_its_own_capabilities(server: WireServer) -> None:
    """Claude on Vertex takes no temperature (the anthropic plugin's options); Gemini on Vertex does."""
    server.push(Answer.json(200, GenerateWire().response(Reply("warm"))))
    with _client(server, project="p", access_token=TOKEN) as llm:
        with pytest.raises(LLMConfigurationError, match="temperature"):
            llm.complete(f"vertex:{CLAUDE}", "hi", temperature=0.3)
        assert server.received == []
        assert llm.complete(f"vertex:{GEMINI}", "hi", temperature=0.3).text == "warm"
    assert server.received[0].json()["generationConfig"]["temperature"] == 0.3


def test_item_5_the_access_token_never_shows(server: WireServer) -> None:
    server.push(
        Answer.json(401, {"error": {"code": 401, "message": f"bad token {TOKEN}", "status": "UNAUTHENTICATED"}})
    )
    with _client(server, project="p", access_token=TOKEN) as llm:
        assert TOKEN not in repr(llm.route(f"vertex:{GEMINI}").provider.settings)
        with pytest.raises(LLMAuthenticationError) as info:
            llm.complete(f"vertex:{GEMINI}", "hi")
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)


def test_item_5_claude_on_vertex_costs_vertexs_published_price(server: WireServer) -> None:
    """Claude Haiku 4.5 on Vertex AI (Google's Vertex pricing page, global endpoint): $1 per million input
    tokens, $5 per million output tokens, cache reads $0.10 per million."""
    usage = Usage(input_tokens=2000, output_tokens=300, cached_tokens=1000)
    server.push(Answer.json(200, MessagesWire().response(Reply("priced", usage=usage))))
    with _client(server, project="p", access_token=TOKEN) as llm:
        response = llm.complete(f"vertex:{CLAUDE}", "hi")
    assert response.usage.cached_tokens == 1000
    expected = (1000 * Decimal("1") + 1000 * Decimal("0.10") + 300 * Decimal("5")) / 10**6
    assert response.usage.cost_usd == expected


def test_item_5_a_credentials_file_setting_takes_the_place_of_application_defaults(
    server: WireServer, tmp_path: Path
) -> None:
    """``credentials_file`` names the key file; ``project`` in the table wins over the file's own."""
    key_file = _service_account(tmp_path, server.url + "/token", project="file-project")
    _token(server)
    server.push(Answer.json(200, GenerateWire().response(Reply("from the file"))))
    with _client(server, credentials_file=str(key_file), project="table-project") as llm:
        assert llm.complete(f"vertex:{GEMINI}", "hi").text == "from the file"
    call = server.received[1]
    assert "/projects/table-project/locations/us-east5/" in call.path
    assert call.headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "could not be read as JSON"),
        (json.dumps({"type": "external_account", "credential_source": {"executable": {"command": "id"}}}), "type"),
    ],
)
def test_item_5_a_credentials_file_that_is_not_a_key_is_refused_before_anything_runs(
    server: WireServer, tmp_path: Path, content: str, message: str
) -> None:
    """A hostile or broken file: not JSON, or an external account whose credential source runs a command."""
    path = tmp_path / "creds.json"
    path.write_text(content)
    with (
        _client(server, credentials_file=str(path), project="p") as llm,
        pytest.raises(LLMConfigurationError, match=message),
    ):
        llm.complete(f"vertex:{GEMINI}", "hi")
    assert server.received == []


def test_item_6_vertex_has_a_row_in_llmplex_providers(tmp_path: Path) -> None:
    """``llmplex providers --check`` imports the plugin, shows it ok with its settings and no secret value."""
    from tests.support.cli import run_llmplex

    env = {"NO_GCE_CHECK": "True", "GOOGLE_CLOUD_PROJECT": "listed-project"}
    done = run_llmplex("providers", "--check", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert any("vertex" in line for line in done.stdout.splitlines()), done.stdout
    assert "access_token" in done.stdout and "credentials_file" in done.stdout
