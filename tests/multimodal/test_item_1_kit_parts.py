"""Issue 16 item 1: the conformance kit checks images, documents and audio where the capability is declared.

The kit's part checks pass on the mock, and fail a mock whose test class declares
other parts than it takes, or whose payload loses or damages a part's bytes.
"""

from __future__ import annotations

import base64

import pytest

from llmplex.testing import media
from llmplex.testing.check_parts import PART_KINDS, carries
from llmplex.testing.kit import ProviderConformanceTests

pytest_plugins = ["pytester"]

HEADER = """
import pytest
import llmplex.providers.mock as mock
from tests.conformance import test_mock as kit_mock
"""


def run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_parts=HEADER + body)
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", "-k", "input_part")


def test_item_1_the_part_checks_are_standard_tests() -> None:
    assert hasattr(ProviderConformanceTests, "test_input_parts_are_the_declared_ones")
    assert hasattr(ProviderConformanceTests, "test_input_part_reaches_the_wire_or_is_refused")
    assert PART_KINDS == ("image", "document", "audio")


def test_item_1_carries_finds_bytes_raw_or_base64_but_not_damaged_ones() -> None:
    data = media.PNG
    standard, urlsafe = base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()
    assert standard != urlsafe
    assert carries({"inline_data": {"data": data}}, data)
    assert carries([{"url": f"data:image/png;base64,{standard}"}], data)
    assert carries(f'{{"data": "{urlsafe.rstrip("=")}"}}', data)
    assert not carries({"data": data[:-1]}, data)
    assert not carries({"url": f"data:image/png;base64,{standard[:-8]}"}, data)
    assert not carries({"text": "no image here", "n": 3}, data)


def test_item_1_the_mock_passes_the_part_checks(pytester: pytest.Pytester) -> None:
    result = run(pytester, "class TestParts(kit_mock.TestMockConformance):\n    pass\n")
    result.assert_outcomes(passed=4)


def test_item_1_declaring_other_parts_than_the_provider_takes_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, 'class TestParts(kit_mock.TestMockConformance):\n    input_parts = frozenset({"image"})\n')
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["*declare input_parts = frozenset(?'audio', 'document', 'image'?)*"])


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        ("piece.pop('data', None)", "*does not hold the * bytes*"),
        ("piece.update(data=piece['data'][:-12])", "*does not hold the * bytes*"),
    ],
    ids=["dropped", "truncated"],
)
def test_item_1_a_plugin_that_loses_part_bytes_fails(pytester: pytest.Pytester, mutation: str, message: str) -> None:
    body = f"""
original = mock._message_data


def lossy(message):
    data = original(message)
    for piece in data["content"] if isinstance(data["content"], list) else ():
        if isinstance(piece, dict):
            {mutation}
    return data


@pytest.fixture(autouse=True)
def _lossy(monkeypatch):
    monkeypatch.setattr(mock, "_message_data", lossy)


class TestParts(kit_mock.TestMockConformance):
    pass
"""
    result = run(pytester, body)
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines([message])
