"""Issue 31 item 8: addresses cannot be steered. Model names, deployment names, projects and locations are
percent-encoded or refused before any URL is built, and the conformance kit checks it for every HTTP plugin:
its new check kills a plugin that splices the model into its URL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from llmplex_azure.transport import deployment
from llmplex_gemini.request import url_model

import tests.plugins.vertex.test_vertex_conformance as vertex_kits
from llmplex.client import Client
from llmplex.errors import LLMConfigurationError
from llmplex.testing import (
    FakeError,
    HTTPConformanceTests,
    Observed,
    Received,
    Reply,
    SentRequest,
    WireAdapter,
    WireServer,
)
from llmplex.testing.check_addresses import hostile_models, steering
from llmplex.testing.enforcement import ConformanceError
from tests.platform.site import install_providers

CHECK = "test_a_hostile_model_never_leaves_the_documented_host_and_path"


class NaiveWire(WireAdapter):
    def response(self, reply: Reply) -> Any:
        return {"text": reply.text}

    def error_body(self, error: FakeError) -> Any:
        return {"error": error.message}

    def read_request(self, received: Received) -> SentRequest:
        return SentRequest(model=received.json()["model"])


class _NaiveKit(HTTPConformanceTests):
    prefix = "naiveurl"
    model = "naive-1"
    wire: ClassVar[WireAdapter] = NaiveWire()


@pytest.fixture
def naive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_providers(tmp_path, monkeypatch, {"naiveurl": "tests.tenancy.naive_url_plugin"})


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _naive_llm(server: WireServer, encode: bool) -> Client:
    settings = {"base_url": server.url, "encode": encode}
    return Client(providers={"naiveurl": settings}, throttle={"max_attempts": 1})


@pytest.mark.usefixtures("naive")
def test_item_8_the_kits_address_check_kills_a_plugin_that_splices_the_model_into_its_url(server: WireServer) -> None:
    with pytest.raises(AssertionError, match="model 'naive-1#fragment'"):
        getattr(_NaiveKit(), CHECK)(_naive_llm(server, encode=False), server)


@pytest.mark.usefixtures("naive")
def test_item_8_the_same_plugin_percent_encoding_its_model_passes_the_check(server: WireServer) -> None:
    getattr(_NaiveKit(), CHECK)(_naive_llm(server, encode=True), server)
    refused = [m for m in hostile_models("naive-1") if ".." in m or any(c.isspace() or c == "\x00" for c in m)]
    assert len(server.received) == 1 + len(hostile_models("naive-1")) - len(refused)  # nothing sent for those
    assert not server.malformed


@pytest.mark.usefixtures("naive")
@pytest.mark.parametrize(
    ("hostile", "why"),
    [
        ("naive-1#fragment", "does not decode"),  # the fragment never leaves the client: the path is cut
        ("naive-1?alt=steered&key=stolen", "query changed"),
        ("naive-1/../../../steered", "other segments"),
        ("naive-1/steered", "other segments"),
        ("naive-1%2F..%2Fsteered", "does not decode"),  # decoded twice on the way it would be a traversal
    ],
)
def test_item_8_each_steering_string_is_caught_on_the_naive_plugin(server: WireServer, hostile: str, why: str) -> None:
    kit, llm = _NaiveKit(), _naive_llm(server, encode=False)
    documented = kit._sent_for(llm, server, "naive-1")
    received = kit._sent_for(llm, server, hostile)
    assert documented is not None and received is not None
    problem = steering(documented, "naive-1", received, hostile)
    assert problem is not None and why in problem, problem


def test_item_8_an_http_kit_cannot_drop_the_address_check() -> None:
    with pytest.raises(ConformanceError, match=f"overrides {CHECK} without"):
        type("TestDropsIt", (HTTPConformanceTests,), {CHECK: lambda self, llm, transport: None})


# -- Vertex AI: the plugin that failed -------------------------------------------------------------------------------


@pytest.fixture
def no_google(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user credentials, no metadata-server probe, no LLMPLEX_* config."""
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "VERTEX_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))


@pytest.mark.usefixtures("no_google")
@pytest.mark.parametrize(
    "kit", [vertex_kits.TestVertexGeminiConformance, vertex_kits.TestVertexClaudeConformance], ids=["gemini", "claude"]
)
def test_item_8_a_hostile_vertex_model_stays_in_its_path_segment(kit: type[HTTPConformanceTests]) -> None:
    build = HTTPConformanceTests.__dict__["llm"]._get_wrapped_function()
    with WireServer() as running:
        getattr(kit(), CHECK)(build(kit(), Observed(), running), running)
        paths = [received.path for received in running.received]
    assert all(path.startswith("/v1") and "/projects/kit-project/locations/us-east5/" in path for path in paths)
    assert any("%23fragment" in path for path in paths)  # '#' sent percent-encoded


HOSTILE_NAMES = [
    "evil.example/x",
    "us-east5/../../x",
    "..",
    "x#frag",
    "x?alt=1",
    "user@evil.example",
    "us east5",
    "us-east5\n",
    "us-east5\x00",
    "",
]


@pytest.mark.usefixtures("no_google")
@pytest.mark.parametrize("field", ["project", "location"])
@pytest.mark.parametrize("value", HOSTILE_NAMES)
def test_item_8_vertex_refuses_a_hostile_project_or_location(field: str, value: str) -> None:
    settings = {"project": "kit-project", "location": "us-east5", "access_token": "t", field: value}
    llm = Client(providers={"vertex": settings})
    with pytest.raises(LLMConfigurationError, match=field):
        llm.route("vertex:gemini-2.5-flash")


@pytest.mark.usefixtures("no_google")
@pytest.mark.parametrize(
    ("project", "location"),
    [("my-project", "us-central1"), ("123456789012", "global"), ("example.com:my-project", "europe-west4")],
)
def test_item_8_vertex_takes_real_projects_and_locations(project: str, location: str) -> None:
    llm = Client(providers={"vertex": {"project": project, "location": location, "access_token": "t"}})
    assert llm.route("vertex:gemini-2.5-flash").provider.settings.location == location


@pytest.mark.usefixtures("no_google")
def test_item_8_vertex_refuses_a_hostile_project_named_by_the_credentials(tmp_path: Path, server: WireServer) -> None:
    credentials = tmp_path / "user.json"
    info = {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}
    credentials.write_text(json.dumps({**info, "quota_project_id": "evil.example/x#"}))
    settings = {"credentials_file": str(credentials), "location": "us-east5", "base_url": server.url}
    llm = Client(providers={"vertex": settings}, throttle={"max_attempts": 1})
    with pytest.raises(LLMConfigurationError, match="project"):
        llm.complete("vertex:gemini-2.5-flash", "hi")
    assert not server.received and not server.malformed


# -- Gemini and Azure: the names they splice into URLs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "sent"),
    [
        ("gemini-2.5-flash", "gemini-2.5-flash"),
        ("models/gemini-2.5-flash", "models/gemini-2.5-flash"),
        ("tunedModels/my-tune", "tunedModels/my-tune"),
        ("gemini#x", "gemini%23x"),
        ("gemini/x", "gemini%2Fx"),
        ("models/x?y", "models/x%3Fy"),
        ("g@evil.example", "g@evil.example"),
    ],
)
def test_item_8_gemini_model_names_are_one_encoded_segment(model: str, sent: str) -> None:
    assert url_model(model) == sent


@pytest.mark.parametrize("name", ["..", "x/../y", "x y", "x\r\nHost: evil.example", "x\x7f", ""])
def test_item_8_names_no_provider_gives_are_refused_before_a_url_is_built(name: str) -> None:
    for encode in (url_model, deployment):
        with pytest.raises(LLMConfigurationError, match="cannot be put into a URL"):
            encode(name)


def test_item_8_azure_deployment_names_are_encoded() -> None:
    assert deployment("my-gpt-4o") == "my-gpt-4o"
    assert deployment("dep#x?y/z") == "dep%23x%3Fy%2Fz"


def test_item_8_gemini_token_counts_put_the_model_in_its_url_encoded() -> None:
    import asyncio
    from types import SimpleNamespace

    from llmplex_gemini.counting import count_tokens

    asked: list[str] = []

    async def counted(model: str, **_: Any) -> Any:
        asked.append(model)
        return SimpleNamespace(total_tokens=7)

    client: Any = SimpleNamespace(vertexai=False, aio=SimpleNamespace(models=SimpleNamespace(count_tokens=counted)))
    payload = {"model": "gemini#x/../y?z", "contents": [], "config": {}}
    with pytest.raises(LLMConfigurationError, match="cannot be put into a URL"):
        asyncio.run(count_tokens(client, payload))
    assert asyncio.run(count_tokens(client, {**payload, "model": "gemini#x/y?z"})) == 7
    assert asked == ["gemini%23x%2Fy%3Fz"]


def test_item_8_gemini_count_tokens_hook_encodes_the_model_once() -> None:
    """The hook hands ``count_tokens`` the payload as formatted: encoded there, not again (``%23`` → ``%2523``)."""
    import asyncio
    from types import SimpleNamespace

    from llmplex_gemini import hooks
    from llmplex_gemini.settings import GeminiSettings

    from llmplex.types import Request

    asked: list[str] = []

    async def counted(model: str, **_: Any) -> Any:
        asked.append(model)
        return SimpleNamespace(total_tokens=3)

    client: Any = SimpleNamespace(vertexai=False, aio=SimpleNamespace(models=SimpleNamespace(count_tokens=counted)))
    request = Request(model="gemini#x", messages=[{"role": "user", "content": "hi"}])
    assert asyncio.run(hooks.llmplex_acount_tokens(request, GeminiSettings(), client)) == (3, "provider")
    assert asked == ["gemini%23x"]
