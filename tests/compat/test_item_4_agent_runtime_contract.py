"""Issue 23 item 4: the agent runtime's contract (seed 001) field for field, and the error attributes code reads.

The expected classes, fields, defaults and signatures are read from the seed's own
Python blocks (tests/compat/seeds/001_agent_runtime.txt), not restated here.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import inspect
from typing import Any

import pytest

from llmplex.compat import agent_runtime as ar
from llmplex.compat.agent_runtime import (
    FunctionCall,
    GeminiAdapter,
    LLMAdapter,
    LLMMessage,
    RateLimitError,
    ToolNotFoundError,
)
from tests.compat.seed_text import annotation_matches, compat_fields, seed, seed_classes, seed_functions
from tests.compat.task_tools import KEY, TOOL_DECLARATIONS
from tests.support.fault_server import Fault, FaultServer

SEED = seed("001_agent_runtime.txt")
DATACLASSES = ["LLMMessage", "LLMResponse", "FunctionCall", "ToolDeclaration", "LLMError", "LLMConfig"]


@pytest.mark.parametrize("name", DATACLASSES)
def test_item_4_every_dataclass_matches_the_contract_field_for_field(name: str) -> None:
    expected = seed_classes(SEED)[name]
    ours = compat_fields(getattr(ar, name))[: len(expected)]
    assert [f.name for f in ours] == [f.name for f in expected]
    for want, have in zip(expected, ours, strict=True):
        assert annotation_matches(want.annotation, have.annotation), (name, want, have)
        assert have.default == (None if want.default is None else repr(eval(want.default))), (name, want, have)


def test_item_4_the_seed_names_every_dataclass_checked_here() -> None:
    assert {"LLMMessage", "LLMResponse", "FunctionCall", "ToolDeclaration", "LLMError", "LLMConfig"} <= set(
        seed_classes(SEED)
    )


@pytest.mark.parametrize(
    ("seed_name", "ours"),
    [
        ("LLMAdapter.generate", LLMAdapter.generate),
        ("LLMAdapter.get_tool_declarations", LLMAdapter.get_tool_declarations),
        ("GeminiAdapter.__init__", GeminiAdapter.__init__),
        ("GeminiAdapter.generate", GeminiAdapter.generate),
    ],
)
def test_item_4_protocol_and_adapter_signatures_match_with_their_defaults(seed_name: str, ours: Any) -> None:
    expected = seed_functions(SEED)[seed_name]
    parameters = [p for p in inspect.signature(ours).parameters.values() if p.name != "self"]
    named = [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default)) for p in parameters]
    wanted = [(n, None if d is None else repr(eval(d))) for n, d in expected]
    assert named[: len(wanted)] == wanted
    assert all(p.default is not inspect.Parameter.empty or p.kind is p.VAR_KEYWORD for p in parameters[len(wanted) :])
    if seed_name.endswith("generate"):
        assert inspect.iscoroutinefunction(ours)


def test_item_4_llm_error_is_the_contracts_dataclass_and_the_subclasses_keep_its_fields() -> None:
    error = ar.LLMError(message="boom", code="api_error")
    assert (error.message, error.code, error.retry_after) == ("boom", "api_error", None)
    with pytest.raises(TypeError):
        ar.LLMError("no code")  # type: ignore[call-arg]  # the contract's code has no default
    for cls in (ar.RateLimitError, ar.TimeoutError, ar.InvalidResponseError, ar.ToolNotFoundError):
        made = cls("went wrong")
        assert isinstance(made, ar.LLMError) and made.message == "went wrong" and made.code
        assert [f.name for f in dataclasses.fields(cls)][:3] == ["message", "code", "retry_after"]
    assert issubclass(ar.TimeoutError, builtins.TimeoutError)


def test_item_4_tool_not_found_error_carries_the_tool_name() -> None:
    adapter = ar.LLMPlexAdapter("mock:echo", registry=TOOL_DECLARATIONS)
    with pytest.raises(ToolNotFoundError) as unknown:
        adapter.get_tool_declarations(["add_task", "fly_to_moon"])
    assert unknown.value.tool_name == "fly_to_moon" and unknown.value.code == "tool_not_found"
    assert "fly_to_moon" in unknown.value.message
    assert ToolNotFoundError("x", tool_name="y").tool_name == "y"


def test_item_4_rate_limit_error_has_a_message_and_retry_after_in_whole_seconds(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLMPLEX_THROTTLE__BASE_DELAY", "0")
    monkeypatch.setenv("LLMPLEX_THROTTLE__MAX_DELAY", "0")
    from llmplex.client import Client

    client = Client(
        providers={"fault": {"plugin": "openai", "base_url": fault_server.url, "api_key": KEY, "api": "chat"}}
    )
    fault_server.enqueue(Fault.rate_limit(retry_after=2.2))
    adapter = ar.LLMPlexAdapter("fault:gpt-test", max_retries=0, client=client)
    with pytest.raises(RateLimitError) as limited:
        asyncio.run(adapter.generate([LLMMessage(role="user", content="hi")], []))
    assert limited.value.retry_after == 3 and isinstance(limited.value.retry_after, int)
    assert limited.value.message.startswith("rate limited") and limited.value.message == str(limited.value)
    assert KEY not in limited.value.message
    assert isinstance(limited.value.__cause__, Exception)


def test_item_4_function_call_arguments_are_required_as_in_the_contract() -> None:
    with pytest.raises(TypeError):
        FunctionCall(name="add_task")  # type: ignore[call-arg]
    assert FunctionCall("add_task", {"description": "milk"}).arguments == {"description": "milk"}
