"""What every conformance check builds on: the declarations, the fake transport's methods, fixtures, helpers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from llmplex.client import Client
from llmplex.engine.attempt import Attempt, hook_client
from llmplex.errors import LLMError
from llmplex.testing.observe import Observed
from llmplex.testing.replies import ErrorKind, FakeError, Reply
from llmplex.testing.sent import SentRequest
from llmplex.testing.wire import wire_text
from llmplex.types import Message, OutputSchema, Request, Response, StreamEvent, Tool, ToolCall, Usage

__all__ = ["CITY_SCHEMA", "SECRET", "TIME_TOOL", "WEATHER_CALL", "WEATHER_TOOL", "KitBase"]

SECRET = "kitsecret-0c7e5a91d2f4"
WEATHER_TOOL = Tool(
    name="get_weather",
    description="KIT weather lookup",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME_TOOL = Tool(
    name="get_time",
    description="KIT clock lookup",
    parameters={"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
)
WEATHER_CALL = ToolCall(id="call_kit_1", name="get_weather", arguments='{"city": "Paris"}')
PARALLEL_CALLS = (
    WEATHER_CALL,
    ToolCall(id="call_kit_2", name="get_weather", arguments='{"city": "Tokyo"}'),
    ToolCall(id="call_kit_3", name="get_time", arguments='{"zone": "UTC"}'),
)
DETAILED_USAGE = Usage(input_tokens=13, output_tokens=29, cached_tokens=5, reasoning_tokens=3)
CITY_SCHEMA = OutputSchema(
    name="kit_city",
    json_schema={
        "type": "object",
        "properties": {"city_name": {"type": "string"}, "country_code": {"type": "string"}},
        "required": ["city_name", "country_code"],
        "additionalProperties": False,
    },
)
USAGE_FIELDS = frozenset({"input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"})


class KitBase:
    """The declarations and the transport a conformance test class provides; see ``ProviderConformanceTests``."""

    prefix: ClassVar[str] = ""
    model: ClassVar[str] = ""
    sent_model: ClassVar[str | None] = None
    settings: ClassVar[Mapping[str, Any]] = {}
    secret_setting: ClassVar[str | None] = "api_key"
    supports_tools: ClassVar[bool] = False
    supports_parallel_tool_calls: ClassVar[bool] = True
    supports_native_structured_output: ClassVar[bool] = False
    supports_streaming: ClassVar[bool] = False
    supports_response_chains: ClassVar[bool] = False
    supports_async: ClassVar[bool] = False
    usage_fields: ClassVar[frozenset[str]] = USAGE_FIELDS
    reports_refusals: ClassVar[bool] = True
    reports_response_id: ClassVar[bool] = True
    always_sent_options: ClassVar[frozenset[str]] = frozenset()
    unsupported_error_kinds: ClassVar[Mapping[ErrorKind, str]] = {}
    reports_retry_after: ClassVar[bool] = True

    # -- what the plugin's test class provides -----------------------------------------

    @pytest.fixture
    def transport(self) -> Any:
        """Set up the fake transport; override this fixture in your subclass."""
        pytest.fail(f"{type(self).__name__} must define a `transport` fixture that fakes the provider's transport")

    def fake_response(self, transport: Any, reply: Reply) -> None:
        """Queue ``reply`` as the provider's next (non-streamed) answer, ``reply.delay`` seconds late."""
        raise NotImplementedError(f"{type(self).__name__} must implement fake_response(transport, reply)")

    def fake_stream(self, transport: Any, reply: Reply) -> None:
        """Queue ``reply`` as the provider's next streamed answer (default: a plain answer)."""
        self.fake_response(transport, reply)

    def fake_error(self, transport: Any, error: FakeError) -> None:
        """Queue one failure of ``error.kind`` as the provider's next answer."""
        raise NotImplementedError(f"{type(self).__name__} must implement fake_error(transport, error)")

    def fake_stall(self, transport: Any, seconds: float) -> None:
        """Queue an answer that never comes: the provider takes the request and says nothing for ``seconds``."""
        raise NotImplementedError(f"{type(self).__name__} must implement fake_stall(transport, seconds)")

    def sent_payloads(self, transport: Any) -> Sequence[Any]:
        """The request bodies that reached the wire, oldest first."""
        raise NotImplementedError(f"{type(self).__name__} must implement sent_payloads(transport)")

    def sent_requests(self, transport: Any) -> Sequence[SentRequest]:
        """The requests that reached the wire, oldest first, read back in core's terms."""
        raise NotImplementedError(f"{type(self).__name__} must implement sent_requests(transport)")

    # -- fixtures ----------------------------------------------------------------------

    @pytest.fixture(autouse=True)
    def _isolated_llmplex_config(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """No user or project config file and no ``LLMPLEX_*`` variable leaks into the kit."""
        for name in list(os.environ):
            if name.startswith("LLMPLEX_"):
                monkeypatch.delenv(name)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
        monkeypatch.chdir(tmp_path)

    @pytest.fixture
    def observed(self) -> Iterator[Observed]:
        """Every event and ``llmplex`` log record of the test."""
        observed = Observed()
        with observed.capturing_logs():
            yield observed

    @pytest.fixture
    def llm(self, observed: Observed) -> Client:
        """A client routing ``prefix`` to the plugin with the kit's secret, without retries."""
        return Client(
            providers={self.prefix: self.provider_settings()},
            throttle={"max_attempts": 1},
            plugins=[observed],
        )

    # -- helpers -----------------------------------------------------------------------

    @property
    def spec(self) -> str:
        """``prefix:model``."""
        return f"{self.prefix}:{self.model}"

    @property
    def secret(self) -> str:
        """The API key the kit configures (empty when the provider has no key setting)."""
        return SECRET if self.secret_setting else ""

    def provider_settings(self) -> dict[str, Any]:
        """The settings table of the test client, with the kit's secret as the key."""
        table = dict(self.settings)
        if self.secret_setting:
            table[self.secret_setting] = SECRET
        return table

    def reply(self, text: str = "", tool_calls: tuple[ToolCall, ...] = (), **fields: Any) -> Reply:
        """A reply from ``model`` (fixed usage unless given)."""
        return Reply(text=text, tool_calls=tool_calls, model=self.model, **fields)

    def request(self, llm: Client, messages: Sequence[Message], **fields: Any) -> Request:
        """A core request to ``model`` as the router resolves it."""
        return Request(model=llm.route(self.spec).model, messages=tuple(messages), **fields)

    def run_request(self, llm: Client, request: Request, timeout: float | None = None) -> Response:
        """Format, send and parse ``request`` through the plugin's hooks (no retries, no deadline)."""
        attempt = Attempt(llm.route(self.spec))
        try:
            return attempt.parse(attempt.send_unguarded(attempt.format(request), request, timeout), request)
        except LLMError:
            raise
        except Exception as exc:
            raise attempt.classify(exc) from exc

    def stream_request(self, llm: Client, request: Request) -> list[StreamEvent]:
        """``request`` streamed through ``Client.stream`` (its messages, tools, options and output)."""
        fields: dict[str, Any] = {**request.config.set_options()}
        if request.tools:
            fields["tools"] = request.tools
        if request.tool_choice is not None:
            fields["tool_choice"] = request.tool_choice
        events = list(llm.stream(self.spec, list(request.messages), **fields))
        assert events, "a stream must end with a response event"
        assert events[-1].type == "response", "a stream ends with its response"
        assert events[-1].response is not None, "a stream ends with its response"
        return events

    def answers(self, llm: Client, transport: Any, reply: Reply, request: Request) -> list[Response]:
        """``reply`` to ``request`` parsed from a plain answer and, when the provider streams, from a stream.

        Each response comes with the request that was sent for it checked: the
        stream flag says which answer was asked for.
        """
        self.fake_response(transport, reply)
        responses = [self.run_request(llm, request)]
        flags = [False]
        if self.supports_streaming:
            self.fake_stream(transport, reply)
            final = self.stream_request(llm, request)[-1].response
            assert final is not None
            responses.append(final)
            flags.append(True)
        sent = self.sent_requests(transport)
        assert [s.stream for s in sent[-len(flags) :]] == flags, (
            "a streamed request must ask for a stream and a plain one must not (the stream flag): "
            f"expected {flags}, sent {[s.stream for s in sent[-len(flags) :]]}"
        )
        return responses

    def only_sent(self, transport: Any) -> SentRequest:
        """The one request sent so far."""
        sent = self.sent_requests(transport)
        assert len(sent) == 1, f"expected one request on the wire, got {len(sent)}"
        return sent[0]

    def sent_texts(self, transport: Any) -> list[str]:
        """The bodies sent so far, each as JSON text."""
        return [wire_text(p) for p in self.sent_payloads(transport)]

    def hook_send(self, llm: Client, request: Request, timeout: float, hook: str) -> Any:
        """Call one of the plugin's I/O hooks (``call``, ``acall``, ``stream``, ``astream``) directly with ``timeout``.

        Core's own deadline guards are not in the way: this is what the plugin does
        with the timeout it is given. Streams are read to the end.
        """
        provider = llm.route(self.spec).provider
        hooks = provider.hooks
        payload = Attempt(llm.route(self.spec)).format(request)

        def args(asynchronous: bool) -> dict[str, Any]:
            client = hook_client(provider, asynchronous)
            sent = {"payload": payload, "request": request, "settings": provider.settings, "timeout": timeout}
            return {**sent, "client": client}

        if hook == "call":
            return hooks.call(**args(False))
        if hook == "stream":
            return list(hooks.stream(**args(False)))

        async def run() -> Any:
            if hook == "acall":
                return await hooks.acall(**args(True))
            return [event async for event in await hooks.astream(**args(True))]

        return asyncio.run(run())
