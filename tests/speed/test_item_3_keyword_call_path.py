"""Issue 34 item 3: a call given only keywords that do not shape the request (``timeout=``, ``deadline=``,
``fallbacks=``, ``throttle=``, ``budget=``) builds its ``Request`` as a call without keywords does: a prompt
string's request without pydantic validating it all again, equal to the validated one in every way."""

from __future__ import annotations

from typing import Any

import pytest

from llmplex.engine import request_builder
from llmplex.engine.request_builder import build_request
from llmplex.errors import LLMBadRequestError, LLMConfigurationError
from llmplex.types import Request


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("options", [None, {}])
def test_item_3_build_request_of_a_bare_prompt_is_not_validated_again(
    monkeypatch: pytest.MonkeyPatch, stream: bool, options: dict[str, Any] | None
) -> None:
    validated = build_request("m", "hi", stream=stream, tools=[])  # no tools, through the whole validation
    assert validated.tools == ()

    def refused(*args: object, **kwargs: object) -> Request:
        raise AssertionError("a bare prompt string's request validated again")

    monkeypatch.setattr(request_builder, "Request", refused)
    built = build_request("m", "hi", stream=stream, options=options)
    monkeypatch.undo()
    assert built == validated
    assert built.model_dump() == validated.model_dump()
    assert built.model_fields_set == validated.model_fields_set
    assert built.messages[0].model_fields_set == validated.messages[0].model_fields_set
    assert list(built.__dict__) == list(validated.__dict__)


@pytest.mark.parametrize(
    "keywords",
    [
        {"system": "be brief"},
        {"tool_choice": "auto"},
        {"provider_options": {"user": "u"}},
        {"previous_response_id": "resp_1"},
        {"options": {"temperature": 0.5}},
        {"cache": True},
        {"cache_key": "k"},
    ],
)
def test_item_3_build_request_with_a_keyword_still_builds_it_whole(keywords: dict[str, Any]) -> None:
    built = build_request("m", "hi", **keywords)
    assert built.messages[-1].content == "hi"
    assert built != build_request("m", "hi")


@pytest.mark.parametrize(
    ("prompt", "error"), [("", LLMConfigurationError), ("   ", LLMConfigurationError), ("a\udc80b", LLMBadRequestError)]
)
def test_item_3_build_request_of_a_bare_prompt_refuses_alike(prompt: str, error: type[Exception]) -> None:
    with pytest.raises(error) as bare:
        build_request("m", prompt)
    with pytest.raises(error) as whole:
        build_request("m", prompt, tools=[])
    assert str(bare.value) == str(whole.value)
