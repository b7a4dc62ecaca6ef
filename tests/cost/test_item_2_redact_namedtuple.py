"""Events carry usage and tool results through ``redact``: a NamedTuple in them must survive it (not crash)."""

from __future__ import annotations

from typing import NamedTuple

from llmplex.masking.values import REDACTED, mask_setting, redact, register_secret


class Point(NamedTuple):
    label: str
    x: int


def test_item_2_redact_rebuilds_a_namedtuple_with_secrets_masked() -> None:
    register_secret("hunter2-secret-value")
    value = {"points": [Point("key hunter2-secret-value", 1), Point("plain", 2)], "pair": (1, "a")}

    masked = redact(value)

    assert masked == {"points": [Point(f"key {REDACTED}", 1), Point("plain", 2)], "pair": (1, "a")}
    assert type(masked["points"][0]) is Point


def test_item_2_mask_setting_keeps_a_namedtuple() -> None:
    masked = mask_setting("api_key", Point("sk-proj-abcdefghijklmnop", 3))
    assert masked == Point(REDACTED, 3)
    assert type(masked) is Point


def test_a_secret_containing_another_is_masked_whole() -> None:
    """Two registered secrets, one inside the other: the longer is masked whole, whichever was registered first
    (a set's order masked the shorter first in one run and left the longer one's tail, '-value', showing)."""
    for first, second in (("hunter2-overlap", "hunter2-overlap-value"), ("hunter3-overlap-value", "hunter3-overlap")):
        register_secret(first)
        register_secret(second)
        longer = max(first, second, key=len)
        assert redact(f"key {longer}!") == f"key {REDACTED}!"
