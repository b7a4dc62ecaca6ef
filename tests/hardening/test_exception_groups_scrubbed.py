"""An exception group raised by a provider reaches the caller with every secret masked.

The scrubber walks ``__cause__`` / ``__context__`` and, for groups, ``exceptions`` (nested groups too);
a group's message cannot be changed in place, so a group whose message echoes the key is replaced
by a masked copy wherever it is linked.
"""

from __future__ import annotations

import asyncio
import secrets
import traceback

import pytest

import llmplex
from llmplex.masking.errors import scrub_error
from llmplex.providers.mock import MockBackend


class _Abort(BaseException):
    """A BaseException of a plugin's own, which makes its group a BaseExceptionGroup."""


def _texts(error: BaseException) -> list[str]:
    """The formatted traceback and the str, repr, args, notes and attributes of every exception reachable."""
    texts = ["".join(traceback.format_exception(error))]
    todo, seen = [error], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        texts += [str(current), repr(current), repr(current.args), repr(vars(current))]
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            texts.append(current.message)
            todo += current.exceptions
    return texts


def _group(key: str, base: bool = False) -> BaseExceptionGroup[BaseException]:
    """A group echoing ``key`` in its message, its note, a nested group and their exceptions' args and attributes;
    ``base``: with a BaseException inside (a BaseExceptionGroup)."""
    echoed = ValueError(f"proxy said: invalid key {key}", {"authorization": f"Bearer {key}"}, key)
    echoed.body = {"error": {"message": f"bad key {key}"}}  # type: ignore[attr-defined]
    inner = _Abort(key) if base else RuntimeError(key)
    nested = BaseExceptionGroup(f"stream workers failed for {key}", [inner, KeyError(key)])
    group = BaseExceptionGroup(f"2 tasks failed (key={key})", [echoed, nested])
    group.add_note(f"retry with key {key}")
    return group


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_a_provider_exception_group_echoing_the_key_is_masked_through_the_public_api(mode: str) -> None:
    key = f"gw{secrets.token_hex(20)}"
    client = llmplex.Client(providers={"mock": {"api_key": key}}, throttle={"max_attempts": 1})
    backend = client.provider_client("mock")
    assert isinstance(backend, MockBackend)
    backend.push_error(_group(key))

    def call() -> object:
        if mode == "complete":
            return client.complete("mock:echo", "hi")
        return asyncio.run(client.acomplete("mock:echo", "hi"))

    with pytest.raises(llmplex.LLMError) as caught:
        call()
    texts = _texts(caught.value)
    assert not [text for text in texts if key in text]
    assert isinstance(caught.value.__cause__, ExceptionGroup)
    groups = [t for t in texts if "tasks failed (key=***)" in t]
    assert groups, "the group stays in the chain, masked, for --debug and logs"
    assert any("stream workers failed for ***" in t for t in texts)
    assert any("retry with key ***" in t for t in texts)


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
def test_a_base_exception_group_propagates_through_the_public_api_with_the_key_masked(mode: str) -> None:
    key = f"gw{secrets.token_hex(20)}"
    client = llmplex.Client(providers={"mock": {"api_key": key}}, throttle={"max_attempts": 1})
    backend = client.provider_client("mock")
    assert isinstance(backend, MockBackend)
    backend.push_error(_group(key, base=True))

    async def drain() -> list[llmplex.StreamEvent]:
        return [event async for event in client.astream("mock:echo", "hi")]

    calls = {
        "complete": lambda: client.complete("mock:echo", "hi"),
        "acomplete": lambda: asyncio.run(client.acomplete("mock:echo", "hi")),
        "stream": lambda: list(client.stream("mock:echo", "hi")),
        "astream": lambda: asyncio.run(drain()),
    }
    with pytest.raises(BaseExceptionGroup) as caught:  # a BaseException inside: not the library's to contain
        calls[mode]()
    assert caught.value.message == "2 tasks failed (key=***)"
    assert not [text for text in _texts(caught.value) if key in text]
    assert client.complete("mock:echo", "still fine").text == "still fine"


def test_a_group_is_masked_as_the_error_itself_and_as_a_cause_or_context() -> None:
    key = f"gw{secrets.token_hex(20)}"
    llmplex.masking.values.register_secret(key)
    masked = scrub_error(_group(key, base=True))
    assert type(masked) is BaseExceptionGroup and masked.message == "2 tasks failed (key=***)"
    assert not [text for text in _texts(masked) if key in text]
    for link in ("__cause__", "__context__"):
        outer = RuntimeError("wrapped")
        setattr(outer, link, _group(key, base=True))
        suppressed = outer.__suppress_context__
        assert scrub_error(outer) is outer
        assert not [text for text in _texts(outer) if key in text]
        assert outer.__suppress_context__ == suppressed


def test_a_group_without_secrets_is_left_as_it_is() -> None:
    group = ExceptionGroup("2 tasks failed", [ValueError("a"), ExceptionGroup("inner", [KeyError("b")])])
    assert scrub_error(group) is group
