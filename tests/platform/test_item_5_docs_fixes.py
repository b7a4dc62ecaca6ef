"""Issue 14 item 5: each docs fix the third-party author needed, checked against the docs and the behaviour.

Where the fix is behaviour (the echo example's timeout and Retry-After, the kit's
``Reply``/``FakeError``, ``provider_client`` outside a loop), the behaviour is
tested; where it is prose, the sentence that was missing is looked for in the
page a plugin author reads.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import httpx
import llmplex_echo
import pytest
import respx

import llmplex
from llmplex import hookspecs
from llmplex.errors import LLMConfigurationError, LLMRateLimitError, LLMServerError
from llmplex.testing import FakeError, Reply
from llmplex.testing.replies import ERROR_KINDS

ROOT = Path(__file__).parents[2]
WRITING = (ROOT / "docs/plugins/writing.md").read_text(encoding="utf-8")
HOOKS = (ROOT / "docs/reference/hooks.md").read_text(encoding="utf-8")
ERRORS = (ROOT / "docs/reference/errors.md").read_text(encoding="utf-8")
ECHO = Path(inspect.getfile(llmplex_echo)).read_text(encoding="utf-8")
BASE_URL = "http://echo.test"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture
def echo_api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL) as router:
        yield router


def _echo() -> llmplex.Client:
    return llmplex.Client(providers={"echo": {"base_url": BASE_URL}}, throttle={"max_attempts": 1})


def test_item_5_echo_never_sends_httpx_a_none_timeout(echo_api: respx.MockRouter) -> None:
    """A call without a deadline gets the client's default timeout; None would mean "wait forever" to httpx."""
    body = {"id": "e1", "model": "echo-1", "text": "hi", "usage": {"input_tokens": 1, "output_tokens": 1}}
    route = echo_api.post("/v1/echo").mock(return_value=httpx.Response(200, json=body))
    with _echo() as llm:
        assert llm.complete("echo:echo-1", "hi").text == "hi"
    timeouts = route.calls.last.request.extensions["timeout"]
    assert all(value is not None for value in timeouts.values()), timeouts
    assert "timeout=timeout)" not in ECHO


@pytest.mark.parametrize("form", ["seconds", "http-date", "ms"])
def test_item_5_echo_reads_retry_after_in_every_form(echo_api: respx.MockRouter, form: str) -> None:
    headers = FakeError("rate_limit", "wait", retry_after=30, retry_after_form=form).headers()  # type: ignore[arg-type]
    echo_api.post("/v1/echo").mock(return_value=httpx.Response(429, json={"error": {}}, headers=headers))
    with _echo() as llm, pytest.raises(LLMRateLimitError) as caught:
        llm.complete("echo:echo-1", "hi")
    assert caught.value.retry_after is not None
    assert 28 <= caught.value.retry_after <= 30
    assert "float(" not in ECHO


def test_item_5_the_error_classes_parse_both_header_forms_and_the_docs_say_so() -> None:
    date = formatdate(1e10, usegmt=True)
    assert LLMServerError("x", headers={"Retry-After": "12"}).retry_after == 12.0
    assert (LLMRateLimitError("x", headers={"Retry-After": date}).retry_after or 0) > 1e6
    assert LLMRateLimitError("x", headers={"retry-after-ms": "1500"}).retry_after == 1.5
    text = _flat(ERRORS)
    assert "`retry-after-ms` (milliseconds), then `Retry-After` as seconds or as an HTTP date" in text
    assert "headers=" in text


def test_item_5_streaming_is_explained() -> None:
    text = _flat(WRITING)
    assert "carries the stream flag when `request.stream` is true" in text
    assert "raise for an error status there, before returning" in text
    assert "The iterator owns the response and closes it when it ends" in text
    assert "core closes the iterator" in text
    assert "`llmplex_astream` is a coroutine: core awaits it, then iterates the async iterator it returns" in text
    doc = _flat(inspect.getdoc(hookspecs.llmplex_astream) or "")
    assert "awaitable of an async iterator" in doc
    assert "stream flag" in _flat(inspect.getdoc(hookspecs.llmplex_stream) or "")


def test_item_5_parse_event_says_where_ids_come_from_and_what_the_index_is() -> None:
    doc = _flat(inspect.getdoc(hookspecs.llmplex_parse_event) or "")
    assert "reads the response's ``response_id`` and ``model`` from the events" in doc
    assert "give each call its own index" in doc


def test_item_5_parse_returns_length_instead_of_raising() -> None:
    doc = _flat(inspect.getdoc(hookspecs.llmplex_parse) or "")
    assert 'returns ``finish_reason="length"``' in doc
    assert "not an exception" in doc


def test_item_5_the_async_client_trap_is_in_the_tutorial_and_refused() -> None:
    text = _flat(WRITING)
    assert "A plugin with async hooks must give `create_async_client`" in text
    assert "create_async_client=_async_client" in ECHO


def test_item_5_errors_md_puts_401_under_one_class() -> None:
    rows = [line for line in ERRORS.splitlines() if line.startswith("| `LLM")]
    assert [row.split("|")[1].strip() for row in rows if "401" in row] == ["`LLMAuthenticationError`"]
    assert ERROR_KINDS["authentication"].classes == (llmplex.LLMAuthenticationError,)


def test_item_5_the_tutorial_covers_tool_choice_output_provider_options_and_problems() -> None:
    text = _flat(WRITING)
    for phrase in ("`request.tool_choice`", "`request.output`", "`request.provider_options`", "`problems()`"):
        assert phrase in text, phrase
    assert "merges `request.provider_options` (the call's `provider_options={...}`) into the payload last" in text
    settings = llmplex_echo.EchoSettings()
    assert settings.problems() == ["no API key: set ECHO_API_KEY or api_key in [providers.echo]"]


def test_item_5_the_hook_reference_states_each_contract_in_prose() -> None:
    section = HOOKS.split("## The contract, hook by hook", 1)[1].split("## When a plugin fails", 1)[0]
    hooks = [name for name in dir(hookspecs) if name.startswith("llmplex_")]
    missing = [
        name
        for name in hooks
        if f"**`{name}(" not in section and f"**`{name}`**" not in section and not name.startswith("llmplex_batch_")
    ]
    assert not missing, f"no prose contract for {missing}"
    assert "**`llmplex_batch_*`**" in section
    assert "LLMDeadlineExceededError" in section


def test_item_5_the_kits_reply_and_fake_error_are_valid() -> None:
    assert Reply(text="cut", finish_reason="length").finish == "length"
    assert Reply(text="x").finish == "stop"
    for seconds, header in ((7.0, "7"), (0.4, "0"), (2.6, "3")):
        value = FakeError("rate_limit", "wait", retry_after=seconds).headers()["retry-after"]
        assert value == header
        assert value.isdigit(), "Retry-After is a whole number of seconds (RFC 9110)"


def test_item_5_provider_client_outside_an_event_loop_is_a_typed_error() -> None:
    with _echo() as llm:
        with pytest.raises(LLMConfigurationError, match="event loop") as caught:
            llm.provider_client("echo", asynchronous=True)
        assert not isinstance(caught.value, RuntimeError)

        async def inside() -> object:
            return llm.provider_client("echo", asynchronous=True)

        assert isinstance(asyncio.run(inside()), httpx.AsyncClient)
