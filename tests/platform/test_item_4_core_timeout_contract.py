"""Issue 14 item 4: the timeout contract is core's — a plugin that ignores its timeout cannot hang a caller.

``stuck:`` (sync hooks) and ``astuck:`` (async hooks) never return and never
look at ``timeout``. Every public call through them, sync and async, raises
``LLMDeadlineExceededError`` within the timeout plus a CI margin: a call, a
stream stalled after its first event, embeddings, the model list, and a
stored response's deletion (which is only logged). Polling and looking up a
provider batch are held to the config's ``timeout`` (a retried
``LLMTimeoutError``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.errors import LLMDeadlineExceededError, LLMTimeoutError
from llmplex.facade.client import delete_response
from tests.platform import stuck_plugin
from tests.platform.site import install_providers
from tests.support.late import Late

TIMEOUT = 0.4
STALL_TIMEOUT = 2.0
"""The stalled stream's timeout: its first event must come first (0.1-0.3 s of a 0.4 s one on a loaded machine)."""
SLACK = 0.6
"""How much later than the timeout the caller may get its error, on llmplex's own account."""


@pytest.fixture(autouse=True)
def stuck_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``stuck`` and ``astuck`` discovered as installed plugins; their blocked threads released afterwards."""
    install_providers(
        tmp_path, monkeypatch, {"stuck": "tests.platform.stuck_plugin", "astuck": "tests.platform.astuck_plugin"}
    )
    stuck_plugin.RELEASE.clear()
    # Warmed up: a process's first Client loads the config and discovers the plugins (1.9 s on a loaded machine),
    # which the tests that make their Client inside the timed call would otherwise charge to the deadline.
    llmplex.Client().close()
    yield
    stuck_plugin.RELEASE.set()


def _assert_on_time(late: Late) -> None:
    seconds = late.seconds()
    assert seconds < SLACK, late.describe(seconds)


def _held(run: Callable[[], Any], timeout: float = TIMEOUT) -> float:
    """Seconds ``run()`` (a call with ``timeout``) took to raise the deadline error."""
    started = time.monotonic()
    late = Late.after(timeout)
    with pytest.raises(LLMDeadlineExceededError):
        run()
    _assert_on_time(late)
    return time.monotonic() - started


@pytest.mark.parametrize("prefix", ["stuck", "astuck"])
def test_item_4_complete_ends_at_the_deadline(prefix: str) -> None:
    with llmplex.Client() as llm:
        assert _held(lambda: llm.complete(f"{prefix}:m", "hi", timeout=TIMEOUT)) >= TIMEOUT - 0.05


@pytest.mark.parametrize("prefix", ["stuck", "astuck"])
def test_item_4_acomplete_ends_at_the_deadline(prefix: str) -> None:
    async def ask() -> None:
        async with llmplex.Client() as llm:
            await llm.acomplete(f"{prefix}:m", "hi", timeout=TIMEOUT)

    _held(lambda: asyncio.run(ask()))


@pytest.mark.parametrize("prefix", ["stuck", "astuck"])
def test_item_4_a_stream_stalled_after_its_first_event_ends_at_the_deadline(prefix: str) -> None:
    seen: list[str] = []

    def read() -> None:
        with llmplex.Client() as llm:
            seen.extend(event.text for event in llm.stream(f"{prefix}:m", "hi", timeout=STALL_TIMEOUT))

    _held(read, STALL_TIMEOUT)
    assert seen == ["first"]


@pytest.mark.parametrize("prefix", ["stuck", "astuck"])
def test_item_4_astream_ends_at_the_deadline(prefix: str) -> None:
    async def read() -> None:
        async with llmplex.Client() as llm:
            async for _ in llm.astream(f"{prefix}:m", "hi", timeout=TIMEOUT):
                pass

    _held(lambda: asyncio.run(read()))


@pytest.mark.parametrize("prefix", ["stuck", "astuck"])
def test_item_4_embed_ends_at_the_deadline(prefix: str) -> None:
    with llmplex.Client() as llm:
        _held(lambda: llm.embed(f"{prefix}:e", ["a", "b"], timeout=TIMEOUT))

    async def aembed() -> None:
        async with llmplex.Client() as llm:
            await llm.aembed(f"{prefix}:e", ["a"], timeout=TIMEOUT)

    _held(lambda: asyncio.run(aembed()))


def test_item_4_the_model_list_ends_at_the_deadline() -> None:
    with llmplex.Client() as llm:
        _held(lambda: llm.models("stuck", timeout=TIMEOUT))
    with llmplex.Client(timeout=TIMEOUT) as llm:
        _held(lambda: llm.models("stuck"))  # the config's timeout by default


def test_item_4_deleting_a_stored_response_gives_up_at_the_deadline(caplog: pytest.LogCaptureFixture) -> None:
    """A deletion is cleanup: a stuck one is logged and given up at the timeout, never raised."""
    with llmplex.Client() as llm:
        route = llm.route("stuck:m")
        late = Late.after(TIMEOUT)
        with caplog.at_level(logging.WARNING, logger="llmplex"):
            asyncio.run(delete_response(route, "resp_1", timeout=TIMEOUT))
        _assert_on_time(late)
    assert "could not delete response resp_1" in caplog.text
    assert "LLMDeadlineExceededError" in caplog.text


@pytest.mark.parametrize("hook", ["poll", "find"])
def test_item_4_polling_or_finding_a_provider_batch_ends_at_the_timeout(hook: str) -> None:
    from llmplex.batching.provider_calls import BatchCalls

    with llmplex.Client(timeout=TIMEOUT, throttle={"max_attempts": 1}) as llm:
        calls = BatchCalls(llm, llm.route("stuck:m"))
        late = Late.after(TIMEOUT)
        with pytest.raises(LLMTimeoutError, match="took longer than the timeout") as caught:
            calls.poll("batch_1") if hook == "poll" else calls.find("llmplex-00")
    _assert_on_time(late)  # the client closed too, as when this bound was on the wall clock
    assert caught.value.retryable, "a slow poll is retried under the provider's throttle policy"
