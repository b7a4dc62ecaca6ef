"""Conformance checks of how a plugin behaves at run time: timeouts, the event loop, secrets, sync/async parity."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from llmplex.client import Client
from llmplex.errors import LLMError, LLMTimeoutError
from llmplex.testing.kit_base import KitBase
from llmplex.testing.loop_lag import LoopLag
from llmplex.testing.observe import Observed
from llmplex.testing.replies import FakeError
from llmplex.types import Message, Response, StreamEvent

__all__ = ["RuntimeChecks"]

TIMEOUT = 0.5
"""The timeout the kit gives a hook facing a stalled provider."""
STALL = 5.0
"""How long the stalled provider says nothing (then it hangs up): a hook ignoring the timeout is held this long."""
TIMEOUT_SLACK = 3.0
"""How much later than the timeout a hook may give up: a loaded 2-core CI machine (a first SDK client, a thread
waiting for a CPU) has taken over a second; a hook held by the stall takes STALL, well past the bound."""
ANSWER_DELAY = 0.4
"""How long the provider takes to answer while the kit watches the event loop."""
MAX_LOOP_LAG = 0.2
"""The longest the event loop may be held during an async call (a blocking call holds it ``ANSWER_DELAY``)."""


class RuntimeChecks(KitBase):
    """Timeouts, the event loop, secrets, parity, response chains."""

    def test_timeout_is_honoured(self, llm: Client, transport: Any) -> None:
        """Every I/O hook gives up near the ``timeout`` core passes when the provider stalls, with a timeout error."""
        provider = llm.route(self.spec).provider
        hooks = [name for name in ("call", "acall", "stream", "astream") if provider.hooks.implements(name)]
        attempt_classify = provider.hooks.classify_error
        for hook in hooks:
            self.fake_stall(transport, STALL)
            request = self.request(llm, [Message.user(f"stall {hook}")], stream=hook.endswith("stream"))
            started = time.monotonic()
            with pytest.raises(BaseException) as info:  # noqa: PT011 - whatever the plugin raises is classified below
                self.hook_send(llm, request, TIMEOUT, hook)
            took = time.monotonic() - started
            assert took < TIMEOUT + TIMEOUT_SLACK, (
                f"llmplex_{hook} ignored the timeout: a stalled provider held it {took:.1f}s with timeout={TIMEOUT}s "
                "(pass `timeout` to the HTTP client's call; None there means no timeout)"
            )
            error = info.value
            if not isinstance(error, LLMError):
                error = attempt_classify(error=error, settings=provider.settings)
            assert isinstance(error, LLMTimeoutError), f"llmplex_{hook} timing out became {type(error).__name__}"

    def test_async_path_does_not_block_the_event_loop(self, llm: Client, transport: Any) -> None:
        """``acomplete`` and ``astream`` await the provider: a slow answer never holds the event loop."""
        request = [Message.user("slowly")]

        async def calls(delay: float) -> None:
            self.fake_response(transport, self.reply("slow answer", delay=delay))
            await llm.acomplete(self.spec, request)
            self.fake_stream(transport, self.reply("slow stream", delay=delay))
            async for _ in llm.astream(self.spec, request):
                pass

        async def measure() -> float:
            await calls(0.0)  # imports, clients and connections are made on first use
            async with LoopLag() as lag:
                await calls(ANSWER_DELAY)
            return lag.worst

        worst = asyncio.run(measure())
        assert worst < MAX_LOOP_LAG, (
            f"the event loop was blocked for {worst:.2f}s while the provider took {ANSWER_DELAY}s to answer: "
            "the async hooks do blocking I/O (use an async HTTP client in llmplex_acall / llmplex_astream, "
            "built by ProviderInfo.create_async_client)"
        )

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
        shown += observed.texts() + self.sent_texts(transport)
        leaks = [text for text in shown if self.secret and self.secret in text]
        assert not leaks, f"the API key leaked into: {leaks[0][:300]}"
        assert observed.events, "events must be emitted to observers"

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
            return (r.text, r.tool_calls, r.usage, r.finish_reason, r.model, r.provider, r.response_id)

        assert shape(sync) == shape(asynchronous)
        assert [(e.type, e.text) for e in sync_events[:-1]] == [(e.type, e.text) for e in async_events[:-1]]
        assert shape(sync_events[-1].response) == shape(async_events[-1].response) == shape(sync)
        sent = self.sent_texts(transport)
        assert sent[0] == sent[1], "sync and async must send the same payload"
        assert sent[2] == sent[3], "sync and async streams must send the same payload"

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
        (sent,) = self.sent_texts(transport)
        assert "resp_kit_previous" in sent
