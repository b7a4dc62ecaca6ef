"""Issue 26 item 7: a ``BaseException`` raised by a provider plugin (``sys.exit``, a ``BaseException`` of its
own, a stray ``GeneratorExit``) — in format, call, parse, opening a stream, mid-stream or parsing an event,
sync and async — is scrubbed and typed like any other failure; Ctrl-C still stops the program."""

from __future__ import annotations

import asyncio
import secrets
import traceback
from pathlib import Path
from typing import Any

import pytest

import llmplex
from tests.platform.site import install_providers

KINDS = {"exit": "SystemExit", "abort": "PluginAbort", "genexit": "GeneratorExit"}


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    install_providers(tmp_path, monkeypatch, {"exiting": "tests.providers_next.exiting_plugin"})
    return f"sk-exit-{secrets.token_hex(16)}"


def _client(key: str) -> llmplex.Client:
    return llmplex.Client({"providers": {"exiting": {"api_key": key}}, "throttle": {"max_attempts": 3}})


def _run(client: llmplex.Client, mode: str, prompt: str) -> Any:
    model = "exiting:m"
    if mode == "complete":
        return client.complete(model, prompt).text
    if mode == "stream":
        return "".join(e.text or "" for e in client.stream(model, prompt))

    async def main() -> Any:
        if mode == "acomplete":
            return (await client.acomplete(model, prompt)).text
        return "".join([e.text or "" async for e in client.astream(model, prompt)])

    return asyncio.run(main())


def _every_text(error: BaseException) -> str:
    texts, todo, seen = ["".join(traceback.format_exception(error))], [error], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        texts += [str(current), repr(current), repr(current.args)]
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
    return "\n".join(texts)


CASES = [
    (mode, place)
    for mode in ("complete", "acomplete", "stream", "astream")
    for place in (
        ("format", "call", "parse") if "complete" in mode else ("format", "stream-open", "stream-mid", "parse-event")
    )
]


@pytest.mark.parametrize(("mode", "place"), CASES)
@pytest.mark.parametrize("kind", list(KINDS))
def test_item_7_a_plugin_base_exception_is_a_typed_scrubbed_llm_error(
    key: str, mode: str, place: str, kind: str
) -> None:
    client = _client(key)
    with pytest.raises(llmplex.LLMError) as caught:
        _run(client, mode, f"{place}:{kind}")
    error = caught.value
    assert f"provider plugin 'exiting' raised {KINDS[kind]}" in error.message, error.message
    assert error.provider == "exiting" and error.context["aborted_with"] == KINDS[kind]
    assert not error.retryable and error.attempts <= 1  # never retried: the plugin is broken, not the network
    assert key not in _every_text(error)
    assert _run(client, mode, "fine").startswith(("ok fine", "first second"))  # the client still works


def test_item_7_sys_exit_shows_its_code_masked(key: str) -> None:
    with pytest.raises(
        llmplex.LLMError, match=r"SystemExit: the plugin called sys\.exit\('fatal: upstream refused key \*\*\*"
    ):
        _client(key).complete("exiting:m", "call:exit")


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
def test_item_7_keyboard_interrupt_still_stops_the_program(key: str, mode: str) -> None:
    with pytest.raises(KeyboardInterrupt):
        _run(_client(key), mode, "call:interrupt" if mode in ("complete", "acomplete") else "stream-mid:interrupt")


def test_item_7_closing_a_stream_early_still_closes_it(key: str) -> None:
    """GeneratorExit at the consumer's close is the stream's own, not the plugin's: no error, nothing left open."""
    stream = _client(key).stream("exiting:m", "fine")
    first = next(stream)
    assert first.text == "first "
    stream.close()
