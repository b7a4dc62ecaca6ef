"""Issue 34 items 2 and 3: llmplex-openai's lean request body is encoded by one encoder built once.

``json.dumps`` with settings other than its defaults builds a ``JSONEncoder`` on every call (10.3 against 8.0 µs
a body). The bytes stay what ``json.dumps`` gave: no ASCII escapes, no spaces, NaN refused.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from llmplex_openai import lean


@pytest.fixture
def wire() -> Any:
    """A wire whose parameter order is ``model``, ``messages`` (the only field ``body`` reads)."""
    built = lean._Wire.__new__(lean._Wire)
    object.__setattr__(built, "order", {"model": 0, "messages": 1})
    return built


PAYLOADS = [
    {"messages": [{"role": "user", "content": "héllo ✓ \u2028"}], "model": "m", "extra": {"n": [1, 2.5, None]}},
    {"model": "m", "messages": [], "temperature": 0.0, "stop": ["\n", '"']},
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_item_3_the_body_is_json_dumps_bytes_without_calling_json_dumps(
    wire: Any, payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ordered = dict(sorted(payload.items(), key=lambda item: {"model": 0, "messages": 1}.get(item[0], 2)))
    expected = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()

    def refused(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("json.dumps called for a body (an encoder built per call)")

    monkeypatch.setattr(json, "dumps", refused)
    assert wire.body(payload) == expected


def test_item_3_a_nan_in_the_body_is_still_refused(wire: Any) -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        wire.body({"model": "m", "temperature": math.nan})
