"""``ProviderConformanceTests``: the standard tests every provider plugin must pass.

A plugin's test module subclasses the base class, declares what the provider
is and can do, and fakes its transport through four small methods:

* the ``transport`` fixture sets the fake up (a ``respx`` router, the mock
  backend, ...) and returns a handle the methods below receive;
* ``fake_response(transport, reply)`` queues one answer in the provider's wire shape;
* ``fake_stream(transport, reply)`` queues the same answer as a stream;
* ``fake_error(transport, error)`` queues one failure of the given kind;
* ``sent_payloads(transport)`` returns the request bodies that reached the wire.

Answers are consumed in the order they were queued. A standard test may only be
overridden with a new function marked ``pytest.mark.xfail(reason=...)``: any
other override, deletion or skip fails the kit (see :mod:`llmplex.testing.enforcement`).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from llmplex.client import Client
from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMAPIError, LLMConfigurationError, LLMError, LLMRateLimitError
from llmplex.provider import ProviderSettings
from llmplex.reliability.throttle import ThrottlePolicy
from llmplex.testing.enforcement import check_subclass
from llmplex.testing.observe import Observed
from llmplex.testing.replies import ERROR_KINDS, ErrorKind, FakeError, Reply
from llmplex.testing.wire import (
    OPTION_VALUES,
    appears_in_order,
    option_keys,
    secretish_fields_not_secret,
    wire_text,
)
from llmplex.types import LLMConfig, Message, OutputSchema, Request, Response, StreamEvent, Tool, ToolCall

__all__ = ["CITY_SCHEMA", "SECRET", "WEATHER_CALL", "WEATHER_TOOL", "ProviderConformanceTests"]

SECRET = "kitsecret-0c7e5a91d2f4"
WEATHER_TOOL = Tool(
    name="get_weather",
    description="KIT weather lookup",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WEATHER_CALL = ToolCall(id="call_kit_1", name="get_weather", arguments='{"city": "Paris"}')
CITY_SCHEMA = OutputSchema(
    name="kit_city",
    json_schema={
        "type": "object",
        "properties": {"city_name": {"type": "string"}, "country_code": {"type": "string"}},
        "required": ["city_name", "country_code"],
        "additionalProperties": False,
    },
)


class ProviderConformanceTests:
    """Subclass me (named ``Test...``) in your plugin's tests.

    Declare:
        prefix: the provider prefix your entry point serves.
        model: a model name to send requests to.
        settings: the provider settings the test client uses (no key needed).
        secret_setting: the settings field holding the API key (``None`` if there
            is none); the kit puts a known secret there and checks that it never leaks.
        supports_tools, supports_native_structured_output, supports_streaming,
        supports_response_chains: must equal the ``Capabilities`` the plugin registers.
        supports_async: the plugin implements ``llmplex_acall`` itself.
        always_sent_options: wire names of options the provider requires and the
            plugin always sends (``{"max_tokens"}`` for Anthropic).
        unsupported_error_kinds: error kinds the provider cannot produce, each with
            the reason; their tests are reported as xfailed with that reason.
        reports_retry_after: a rate-limit answer can say how long to wait (HTTP
            ``Retry-After``); ``False`` when the transport has no such field (a CLI's
            result), and then ``retry_after`` must stay ``None``.
    """

    prefix: ClassVar[str] = ""
    model: ClassVar[str] = ""
    settings: ClassVar[Mapping[str, Any]] = {}
    secret_setting: ClassVar[str | None] = "api_key"
    supports_tools: ClassVar[bool] = False
    supports_native_structured_output: ClassVar[bool] = False
    supports_streaming: ClassVar[bool] = False
    supports_response_chains: ClassVar[bool] = False
    supports_async: ClassVar[bool] = False
    always_sent_options: ClassVar[frozenset[str]] = frozenset()
    unsupported_error_kinds: ClassVar[Mapping[ErrorKind, str]] = {}
    reports_retry_after: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_subclass(cls, ProviderConformanceTests)

    # -- what the plugin provides ------------------------------------------------------

    @pytest.fixture
    def transport(self) -> Any:
        """Set up the fake transport; override this fixture in your subclass."""
        pytest.fail(f"{type(self).__name__} must define a `transport` fixture that fakes the provider's transport")

    def fake_response(self, transport: Any, reply: Reply) -> None:
        """Queue ``reply`` as the provider's next (non-streamed) answer."""
        raise NotImplementedError(f"{type(self).__name__} must implement fake_response(transport, reply)")

    def fake_stream(self, transport: Any, reply: Reply) -> None:
        """Queue ``reply`` as the provider's next streamed answer (default: a plain answer)."""
        self.fake_response(transport, reply)

    def fake_error(self, transport: Any, error: FakeError) -> None:
        """Queue one failure of ``error.kind`` as the provider's next answer."""
        raise NotImplementedError(f"{type(self).__name__} must implement fake_error(transport, error)")

    def sent_payloads(self, transport: Any) -> Sequence[Any]:
        """The request bodies that reached the wire, oldest first."""
        raise NotImplementedError(f"{type(self).__name__} must implement sent_payloads(transport)")

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

    def reply(self, text: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Reply:
        """A reply from ``model`` with fixed usage."""
        return Reply(text=text, tool_calls=tool_calls, model=self.model)

    def request(self, llm: Client, messages: Sequence[Message], **fields: Any) -> Request:
        """A core request to ``model`` as the router resolves it."""
        return Request(model=llm.route(self.spec).model, messages=tuple(messages), **fields)

    def run_request(self, llm: Client, request: Request) -> Response:
        """Format, send and parse ``request`` through the plugin's hooks (no retries)."""
        attempt = Attempt(llm.route(self.spec))
        try:
            return attempt.parse(attempt.send(attempt.format(request), None, request), request)
        except LLMError:
            raise
        except Exception as exc:
            raise attempt.classify(exc) from exc

    def wire(self, transport: Any) -> list[str]:
        """The bodies sent so far, each as JSON text."""
        return [wire_text(p) for p in self.sent_payloads(transport)]

    # -- registration and settings -----------------------------------------------------

    def test_registers_its_prefix_and_capabilities(self, llm: Client) -> None:
        """The entry point names the prefix, and the declared capabilities are the registered ones."""
        assert self.prefix, "set `prefix` on the conformance test class"
        assert self.model, "set `model` on the conformance test class"
        assert self.prefix in llm.host.entries(), f"no entry point named {self.prefix!r} in group llmplex.providers"
        provider = llm.route(self.spec).provider
        info = provider.info
        assert info.name == self.prefix
        assert issubclass(info.settings_model, ProviderSettings)
        declared = {
            "tools": self.supports_tools,
            "native_structured_output": self.supports_native_structured_output,
            "streaming": self.supports_streaming,
            "response_chains": self.supports_response_chains,
        }
        registered = {name: getattr(info.capabilities, name) for name in declared}
        assert registered == declared, "the test class must declare the capabilities the plugin registers"
        hooks = provider.hooks
        assert hooks.implements("format"), "llmplex_format is required"
        assert hooks.implements("parse"), "llmplex_parse is required"
        assert hooks.implements("call") or hooks.implements("acall"), "implement llmplex_call or llmplex_acall"
        assert hooks.implements("acall") == self.supports_async, "supports_async must say whether acall is native"
        streams = hooks.implements("stream") or hooks.implements("astream")
        assert streams == self.supports_streaming, "Capabilities.streaming must say whether stream hooks exist"
        if hooks.implements("stream") or hooks.implements("astream"):
            assert hooks.implements("parse_event"), "a streaming plugin must implement llmplex_parse_event"

    def test_settings_are_validated(self, llm: Client) -> None:
        """Unknown settings are rejected by name; env vars name real fields; keys are secret."""
        settings_model = llm.route(self.spec).provider.info.settings_model
        fields = set(settings_model.model_fields)
        assert set(settings_model.env_vars) <= fields, "env_vars must map existing settings fields"
        assert not secretish_fields_not_secret(settings_model), "key/token/secret fields must be SecretStr"
        if self.secret_setting:
            assert self.secret_setting in fields
        bad = Client(providers={self.prefix: {**self.provider_settings(), "kit_no_such_setting": 1}})
        with pytest.raises(LLMConfigurationError, match="kit_no_such_setting"):
            bad.route(self.spec)

    # -- format and parse --------------------------------------------------------------

    def test_plain_text(self, llm: Client, transport: Any) -> None:
        """A prompt reaches the wire; text, usage, finish reason and provider come back."""
        self.fake_response(transport, self.reply("Bonjour from the conformance kit"))
        response = llm.complete(self.spec, "Say bonjour, kit")
        assert response.text == "Bonjour from the conformance kit"
        assert (response.provider, response.finish_reason, response.attempts) == (self.prefix, "stop", 1)
        assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
        assert response.model
        sent = self.wire(transport)
        assert len(sent) == 1
        assert "Say bonjour, kit" in sent[0]

    def test_multi_turn(self, llm: Client, transport: Any) -> None:
        """Every turn of a conversation reaches the wire, in order, with the system prompt."""
        self.fake_response(transport, self.reply("fourth"))
        messages = [
            Message.user("KIT-USER-ONE"),
            Message.assistant("KIT-ASSISTANT-ONE"),
            Message.user("KIT-USER-TWO"),
        ]
        assert llm.complete(self.spec, messages, system="KIT-SYSTEM").text == "fourth"
        (sent,) = self.wire(transport)
        assert "KIT-SYSTEM" in sent
        assert appears_in_order(sent, ["KIT-USER-ONE", "KIT-ASSISTANT-ONE", "KIT-USER-TWO"])

    def test_tool_calls(self, llm: Client, transport: Any) -> None:
        """Tools reach the wire and tool calls come back (or tools are refused before sending)."""
        request = self.request(llm, [Message.user("Weather in Paris?")], tools=(WEATHER_TOOL,))
        if not self.supports_tools:
            with pytest.raises(LLMConfigurationError):
                self.run_request(llm, request)
            assert not self.sent_payloads(transport), "a request the provider cannot express must not be sent"
            return
        self.fake_response(transport, self.reply(tool_calls=(WEATHER_CALL,)))
        response = self.run_request(llm, request)
        assert response.finish_reason == "tool_calls"
        (call,) = response.tool_calls
        assert call.name == "get_weather"
        assert call.id
        assert call.parsed_arguments() == {"city": "Paris"}
        (sent,) = self.wire(transport)
        assert all(part in sent for part in ("get_weather", "KIT weather lookup", "city"))

    def test_tool_results(self, llm: Client, transport: Any) -> None:
        """A conversation carrying a tool call and its result reaches the wire."""
        messages = [
            Message.user("Weather in Paris?"),
            Message.assistant(tool_calls=(WEATHER_CALL,)),
            Message.tool(WEATHER_CALL.id, "KIT-TOOL-RESULT-21C", name="get_weather"),
        ]
        request = self.request(llm, messages, tools=(WEATHER_TOOL,) if self.supports_tools else ())
        if not self.supports_tools:
            with pytest.raises(LLMConfigurationError):
                self.run_request(llm, request)
            assert not self.sent_payloads(transport)
            return
        self.fake_response(transport, self.reply("It is 21C."))
        assert self.run_request(llm, request).text == "It is 21C."
        (sent,) = self.wire(transport)
        assert appears_in_order(sent, ["Weather in Paris?", "get_weather", "KIT-TOOL-RESULT-21C"])

    def test_structured_output(self, llm: Client, transport: Any) -> None:
        """A JSON-Schema request formats (natively: the schema reaches the wire) and JSON text parses."""
        self.fake_response(transport, self.reply('{"city_name": "Paris", "country_code": "FR"}'))
        request = self.request(llm, [Message.user("Capital of France?")], output=CITY_SCHEMA)
        response = self.run_request(llm, request)
        assert json.loads(response.text) == {"city_name": "Paris", "country_code": "FR"}
        (sent,) = self.wire(transport)
        if self.supports_native_structured_output:
            assert "country_code" in sent, "the schema must reach the wire"
            assert "city_name" in sent, "the schema must reach the wire"

    # -- streaming ---------------------------------------------------------------------

    def _stream_and_complete(self, llm: Client, transport: Any, reply: Reply, **fields: Any) -> tuple[Any, Any]:
        """The same reply through format/call/parse and through ``Client.stream``."""
        self.fake_response(transport, reply)
        self.fake_stream(transport, reply)
        complete = self.run_request(llm, self.request(llm, [Message.user("Tell me")], **fields))
        events: list[StreamEvent] = list(llm.stream(self.spec, "Tell me", **fields))
        assert events
        assert events[-1].type == "response"
        assert events[-1].response is not None
        return complete, events

    def test_stream_assembles_to_the_complete_answer(self, llm: Client, transport: Any) -> None:
        """Streamed text deltas join to the final response, which equals the non-streamed one."""
        complete, events = self._stream_and_complete(llm, transport, self.reply("one two three four"))
        final = events[-1].response
        deltas = "".join(e.text for e in events if e.type == "text")
        assert deltas == final.text == complete.text == "one two three four"
        assert (final.usage, final.finish_reason, final.provider) == (
            complete.usage,
            complete.finish_reason,
            self.prefix,
        )

    def test_stream_tool_calls_match_complete(self, llm: Client, transport: Any) -> None:
        """Streamed tool-call pieces assemble to the calls a non-streamed answer has."""
        if not self.supports_tools:
            with pytest.raises(LLMConfigurationError):
                list(llm.stream(self.spec, "weather?", tools=[WEATHER_TOOL]))
            assert not self.sent_payloads(transport)
            return
        reply = self.reply(tool_calls=(WEATHER_CALL,))
        complete, events = self._stream_and_complete(llm, transport, reply, tools=(WEATHER_TOOL,))
        final = events[-1].response

        def shape(calls: Sequence[ToolCall]) -> list[tuple[str, Any]]:
            return [(c.name, c.parsed_arguments()) for c in calls]

        assert shape(final.tool_calls) == shape(complete.tool_calls) == [("get_weather", {"city": "Paris"})]
        assert final.finish_reason == complete.finish_reason == "tool_calls"

    # -- errors ------------------------------------------------------------------------

    @pytest.mark.parametrize("kind", list(ERROR_KINDS))
    def test_errors_are_classified(self, llm: Client, transport: Any, kind: ErrorKind) -> None:
        """Each failure kind becomes the right taxonomy class with the right ``retryable``."""
        if kind in self.unsupported_error_kinds:
            pytest.xfail(self.unsupported_error_kinds[kind])
        retry_after = 7.0 if kind == "rate_limit" else None
        self.fake_error(transport, FakeError(kind, f"kit {kind} failure for key {self.secret}", retry_after))
        with pytest.raises(LLMError) as info:
            llm.complete(self.spec, "fail please")
        error = info.value
        expected = ERROR_KINDS[kind]
        assert isinstance(error, expected.classes), f"{kind} became {type(error).__name__}: {error}"
        assert error.retryable is expected.retryable
        assert (error.provider, error.attempts) == (self.prefix, 1)
        if isinstance(error, LLMAPIError) and expected.has_status:
            assert error.status_code is not None
            assert 400 <= error.status_code < 600
        if kind == "rate_limit":
            assert isinstance(error, LLMRateLimitError)
            reported = retry_after if self.reports_retry_after else None
            assert error.retry_after == reported, "Retry-After must be read into retry_after (None if not reported)"
        if self.secret:
            assert self.secret not in str(error)
            assert self.secret not in repr(error)

    def test_unknown_errors_are_left_to_core(self, llm: Client) -> None:
        """``llmplex_classify_error`` returns None for exceptions it does not know."""
        provider = llm.route(self.spec).provider
        error = provider.hooks.classify_error(error=_KitUnknownError("kit"), settings=provider.settings)
        assert type(error) is LLMError, "an unknown exception must be left to core's fallback classifier"

    def test_retries_happen_in_core_only(self, llm: Client, transport: Any) -> None:
        """The SDK does not retry on its own: one 500 then one answer is two core attempts, two requests."""
        self.fake_error(transport, FakeError("server", "kit server failure"))
        self.fake_response(transport, self.reply("second time lucky"))
        retry_once = ThrottlePolicy(max_attempts=2, base_delay=0, max_delay=0)
        response = llm.complete(self.spec, "retry me", throttle=retry_once)
        assert (response.text, response.attempts) == ("second time lucky", 2)
        assert len(self.sent_payloads(transport)) == 2

    # -- secrets -----------------------------------------------------------------------

    def test_no_secret_anywhere(self, llm: Client, transport: Any, observed: Observed) -> None:
        """The API key is in no error, repr, log record, event or request body."""
        shown: list[str] = [repr(llm), repr(llm.route(self.spec)), repr(llm.route(self.spec).provider.settings)]
        self.fake_response(transport, self.reply("fine"))
        shown.append(repr(llm.complete(self.spec, "hello")))
        self.fake_stream(transport, self.reply("fine"))
        shown += [repr(e) for e in llm.stream(self.spec, "hello")]
        for kind in ("authentication", "bad_request", "rate_limit", "server"):
            self.fake_error(transport, FakeError(kind, f"Incorrect API key provided: {self.secret or 'none'}"))
            with pytest.raises(LLMError) as info:
                llm.complete(self.spec, "fail")
            error = info.value
            own = {k: v for k, v in vars(error).items() if k != "cause"}  # the SDK's exception is its own
            shown += [str(error), repr(error), repr(own)]
        shown += observed.texts() + self.wire(transport)
        leaks = [text for text in shown if self.secret and self.secret in text]
        assert not leaks, f"the API key leaked into: {leaks[0][:300]}"
        assert observed.events, "events must be emitted to observers"

    # -- sync / async ------------------------------------------------------------------

    def test_sync_async_parity(self, llm: Client, transport: Any) -> None:
        """``complete``/``acomplete`` and ``stream``/``astream`` send the same and return the same."""
        reply = self.reply("same either way")
        for _ in range(2):
            self.fake_response(transport, reply)
        sync = llm.complete(self.spec, "parity")

        async def both() -> tuple[Response, list[StreamEvent]]:
            answer = await llm.acomplete(self.spec, "parity")
            self.fake_stream(transport, reply)
            return answer, [e async for e in llm.astream(self.spec, "parity")]

        asynchronous, async_events = asyncio.run(both())
        self.fake_stream(transport, reply)
        sync_events = list(llm.stream(self.spec, "parity"))

        def shape(r: Response | None) -> tuple[Any, ...]:
            assert r is not None
            return (r.text, r.tool_calls, r.usage, r.finish_reason, r.model, r.provider)

        assert shape(sync) == shape(asynchronous)
        assert [(e.type, e.text) for e in sync_events[:-1]] == [(e.type, e.text) for e in async_events[:-1]]
        assert shape(sync_events[-1].response) == shape(async_events[-1].response) == shape(sync)
        sent = self.wire(transport)
        assert sent[0] == sent[1], "sync and async must send the same payload"

    # -- options -----------------------------------------------------------------------

    def test_only_given_options_reach_the_wire(self, llm: Client, transport: Any) -> None:
        """No option is sent unless given; a given option reaches the wire or is refused before sending."""
        self.fake_response(transport, self.reply("plain"))
        llm.complete(self.spec, "no options")
        (default,) = self.sent_payloads(transport)
        unexpected = option_keys(default) - self.always_sent_options
        assert not unexpected, f"options sent without being given: {sorted(unexpected)}"
        attempt = Attempt(llm.route(self.spec))
        for name, value in OPTION_VALUES.items():
            probe = self.request(llm, [Message.user("one option")], config=LLMConfig(**{name: value}))
            try:
                attempt.format(probe)
            except LLMConfigurationError:
                with pytest.raises(LLMConfigurationError):
                    llm.complete(self.spec, "one option", **{name: value})
                continue
            before = len(self.sent_payloads(transport))
            self.fake_response(transport, self.reply("with option"))
            llm.complete(self.spec, "one option", **{name: value})
            sent = self.wire(transport)
            assert len(sent) == before + 1
            shown = json.dumps(value[0] if isinstance(value, tuple) else value)
            assert shown in sent[-1], f"option {name}={value!r} did not reach the wire: {sent[-1][:300]}"

    # -- response chains ---------------------------------------------------------------

    def test_response_chains(self, llm: Client, transport: Any) -> None:
        """With response chains, ``previous_response_id`` is sent and the answer's id returned; without, no deletion."""
        provider = llm.route(self.spec).provider
        if not self.supports_response_chains:
            assert not provider.info.capabilities.delete_response
            assert not provider.hooks.implements("delete_response")
            return
        self.fake_response(transport, self.reply("chained"))
        request = self.request(llm, [Message.user("and then?")], previous_response_id="resp_kit_previous")
        response = self.run_request(llm, request)
        assert response.response_id, "a provider with response chains must return the response id"
        (sent,) = self.wire(transport)
        assert "resp_kit_previous" in sent


class _KitUnknownError(Exception):
    """An exception no provider plugin can know."""
