"""Issue 34 item 3: an async whole answer is awaited without a containment coroutine of its own.

``Attempt.asend`` hands on the plugin's own awaitable (no ``acontained`` coroutine between the pipeline and the
plugin, one frame fewer on every resumption of the call); the pipeline contains what the plugin raises, and
``Attempt.send`` does on the bridge loop. A plugin's ``BaseException`` while sending, raised by its hook itself or
while its answer is awaited, with or without a deadline, sync or async, is still the call's typed ``LLMError``;
Ctrl-C and cancellation still pass.

This module is also the ``asyncexit:`` provider plugin (async hooks only) the tests install.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.engine import attempt
from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderInfo
from llmplex.types import Request, Response, Usage
from tests.platform.site import install_providers
from tests.support.plugin_aborts import abort


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(ProviderInfo(name="asyncexit"))


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    return {"prompt": str(request.messages[-1].content)}


@hookimpl
def llmplex_acall(payload: dict[str, Any]) -> Awaitable[Any]:
    """Aborts in the hook itself (``hook:KIND``) or while its answer is awaited (``await:KIND``)."""
    place, _, kind = payload["prompt"].partition(":")
    if place == "hook":
        abort(kind)

    async def answer() -> dict[str, Any]:
        await asyncio.sleep(0)
        if place == "await":
            abort(kind)
        return payload

    return answer()


@hookimpl
def llmplex_parse(raw: dict[str, Any]) -> Response:
    return Response(text=f"ok {raw['prompt']}", usage=Usage(input_tokens=1, output_tokens=1))


@pytest.fixture
def llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    install_providers(tmp_path, monkeypatch, {"asyncexit": __name__})
    return llmplex.Client(throttle={"max_attempts": 3})


def _ask(llm: llmplex.Client, mode: str, prompt: str) -> str:
    if mode == "sync":  # an async-only provider: sent on the bridge loop
        return llm.complete("asyncexit:m", prompt).text
    timeout = {"timeout": 30.0} if mode == "async with a deadline" else {}
    return asyncio.run(llm.acomplete("asyncexit:m", prompt, **timeout)).text  # type: ignore[arg-type]


def test_item_3_core_an_async_answer_is_awaited_without_acontained(
    llm: llmplex.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapped: list[object] = []
    real = attempt.acontained

    def spy(*args: Any, **kwargs: Any) -> Any:
        wrapped.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(attempt, "acontained", spy)
    assert _ask(llm, "async", "fine") == "ok fine"
    assert _ask(llm, "async with a deadline", "fine") == "ok fine"
    assert wrapped == []


MODES = ["async", "async with a deadline", "sync"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("place", ["hook", "await"])
@pytest.mark.parametrize(("kind", "name"), [("exit", "SystemExit"), ("abort", "PluginAbort")])
def test_item_3_core_a_plugin_base_exception_while_sending_is_still_a_typed_error(
    llm: llmplex.Client, mode: str, place: str, kind: str, name: str
) -> None:
    with pytest.raises(llmplex.LLMError) as caught:
        _ask(llm, mode, f"{place}:{kind}")
    error = caught.value
    assert f"provider plugin 'asyncexit' raised {name}" in error.message, error.message
    assert error.provider == "asyncexit" and error.context["aborted_with"] == name
    assert type(error.__cause__).__name__ == name
    assert not error.retryable and error.attempts == 1
    assert _ask(llm, mode, "fine") == "ok fine"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("place", ["hook", "await"])
def test_item_3_core_ctrl_c_while_sending_still_stops_the_program(llm: llmplex.Client, mode: str, place: str) -> None:
    """On the sync path of an async-only provider too: raised on the bridge loop, the KeyboardInterrupt reaches the
    sync caller and the loop answers the next call (it used to stop the loop's own thread: that caller and every
    later one waited forever)."""
    assert isinstance(_bounded(lambda: _ask(llm, mode, f"{place}:interrupt")), KeyboardInterrupt)
    assert _bounded(lambda: _ask(llm, mode, "fine")) == "ok fine"


def _bounded(ask: Callable[[], str]) -> str | BaseException:
    """``ask()``'s answer or what it raised, asked on a thread of its own: a call still waiting after a minute
    fails the test instead of holding up the run."""
    outcome: list[str | BaseException] = []

    def run() -> None:
        try:
            outcome.append(ask())
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, "the call still waits after 60 s: the bridge loop's thread stopped"
    return outcome[0]


_WAITING_CALLER = """
import asyncio, signal, threading
from llmplex.engine.bridge import run_on_loop

cancelled = threading.Event()

async def work():
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # Ctrl-C while the caller waits
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise

try:
    run_on_loop(work)
except KeyboardInterrupt:
    print("interrupted; cancelled on the loop:", cancelled.wait(60))
"""


def test_item_3_core_ctrl_c_while_a_sync_caller_waits_cancels_its_call_on_the_bridge_loop() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WAITING_CALLER], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "interrupted; cancelled on the loop: True", done.stdout + done.stderr


def test_item_3_core_a_cancelled_send_is_still_cancelled(llm: llmplex.Client) -> None:
    async def main() -> bool:
        task = asyncio.create_task(llm.acomplete("asyncexit:m", "fine"))
        await asyncio.sleep(0)  # the task has begun: its answer is awaited
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()

    assert asyncio.run(main())
