"""Issue 12 item 13: blank prompts are refused (LLMConfigurationError) and text that is not valid Unicode
(a lone surrogate) is a bad request (LLMBadRequestError), before anything is sent, on every path."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import LLMBadRequestError, LLMConfigurationError
from llmplex.providers.mock import MockBackend
from tests.support.cli import LLMPLEX, run_llmplex

BLANK: list[tuple[Any, dict[str, Any]]] = [
    ("", {}),
    ("   \n\t ", {}),
    ([], {}),
    ([], {"system": "You are terse."}),
    ("hi", {"system": " "}),
    ([{"role": "user", "content": ""}], {}),
    ([llmplex.Message.system("Be brief."), llmplex.Message.user("\n")], {}),
]
SURROGATES: list[tuple[Any, dict[str, Any]]] = [
    ("half a pair: \ud800", {}),
    ("hi", {"system": "caf\udce9"}),
    (
        [
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": "\udfff"},
            {"role": "user", "content": "?"},
        ],
        {},
    ),
]


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _run(client: llmplex.Client, how: str, prompt: Any, kwargs: dict[str, Any]) -> None:
    if how == "complete":
        client.complete("mock:m", prompt, **kwargs)
    elif how == "acomplete":
        asyncio.run(client.acomplete("mock:m", prompt, **kwargs))
    elif how == "stream":
        list(client.stream("mock:m", prompt, **kwargs))
    elif how == "astream":

        async def consume() -> None:
            async for _ in client.astream("mock:m", prompt, **kwargs):
                pass

        asyncio.run(consume())
    elif how == "tools":
        client.complete("mock:m", prompt, tools=[_add], **kwargs)
    else:
        client.complete("mock:m", prompt, output={"type": "object", "properties": {"a": {"type": "string"}}}, **kwargs)


HOWS = ["complete", "acomplete", "stream", "astream", "tools", "output"]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("prompt", "kwargs"), BLANK)
def test_item_13_blank_prompt_is_a_configuration_error_before_sending(
    client: llmplex.Client, mock_backend: MockBackend, how: str, prompt: Any, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(LLMConfigurationError, match=r"empty|whitespace") as caught:
        _run(client, how, prompt, kwargs)
    assert type(caught.value) is LLMConfigurationError
    assert mock_backend.calls == []


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("prompt", "kwargs"), SURROGATES)
def test_item_13_lone_surrogate_is_a_bad_request_before_sending(
    client: llmplex.Client, mock_backend: MockBackend, how: str, prompt: Any, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(LLMBadRequestError, match="lone surrogate") as caught:
        _run(client, how, prompt, kwargs)
    assert "not valid Unicode" in str(caught.value)
    assert mock_backend.calls == []


def test_item_13_batch_rows_fail_in_place(client: llmplex.Client, mock_backend: MockBackend) -> None:
    rows = [{"prompt": ""}, {"prompt": "a\ud800"}, {"messages": []}, {"prompt": "fine"}]
    results = llmplex.batch([{"model": "mock:m", **row} for row in rows], client=client)
    assert [type(r).__name__ for r in results] == [
        "LLMConfigurationError",
        "LLMBadRequestError",
        "LLMConfigurationError",
        "Response",
    ]
    assert len(mock_backend.calls) == 1


def _assert_one_paragraph(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1 and stderr.startswith("error: "), stderr


@pytest.mark.parametrize(
    ("args", "stdin"), [(("",), ""), ((), "  \n\n"), ((), "")], ids=["arg", "stdin-blank", "stdin"]
)
def test_item_13_cli_blank_prompt_exits_3(isolated_config: Path, args: tuple[str, ...], stdin: str) -> None:
    result = run_llmplex("complete", "-m", "mock:echo", *args, cwd=isolated_config, stdin=stdin)
    assert result.returncode == 3, result.stderr
    _assert_one_paragraph(result.stderr)
    assert "LLMConfigurationError" in result.stderr and "give it text" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("via", ["argument", "stdin"])
def test_item_13_cli_prompt_that_is_not_utf8_exits_7(isolated_config: Path, via: str) -> None:
    prompt = "caf\xe9".encode("latin-1")  # not UTF-8: Python reads it as a lone surrogate
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMPLEX_")}
    env |= {"XDG_CONFIG_HOME": str(isolated_config / "xdg"), "PYTHONIOENCODING": "utf-8"}
    argv = [os.fsencode(LLMPLEX), b"complete", b"-m", b"mock:echo"] + ([prompt] if via == "argument" else [])
    result = subprocess.run(
        argv,
        input=b"" if via == "argument" else prompt,
        capture_output=True,
        cwd=isolated_config,
        env=env,
        timeout=120,
        check=False,
    )
    stderr = result.stderr.decode()
    assert result.returncode == 7, stderr
    _assert_one_paragraph(stderr)
    assert "LLMBadRequestError" in stderr and "not valid Unicode" in stderr
    assert result.stdout == b""
