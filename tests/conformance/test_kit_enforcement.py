"""Conformance cannot be dropped quietly: overrides, deletions and skips fail; xfail with a reason is visible."""

from __future__ import annotations

import pytest

from llmplex.testing.enforcement import ConformanceError, check_subclass
from llmplex.testing.kit import ProviderConformanceTests

pytest_plugins = ["pytester"]

HEADER = """
import pytest
from tests.conformance import test_mock as kit_mock
"""


def run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_plugin=HEADER + body)
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", "-k", "test_plain_text")


def test_the_mock_subclass_itself_is_accepted() -> None:
    from tests.conformance.test_mock import TestMockConformance

    check_subclass(TestMockConformance, ProviderConformanceTests)


def test_override_without_xfail_is_a_collection_error(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
class TestWeakened(kit_mock.TestMockConformance):
    def test_plain_text(self):
        pass
""",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*overrides test_plain_text without @pytest.mark.xfail(reason=...)*"])


def test_override_with_xfail_reason_is_reported_as_xfailed(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
class TestHonest(kit_mock.TestMockConformance):
    @pytest.mark.xfail(reason="this provider cannot say bonjour", strict=True)
    def test_plain_text(self):
        raise AssertionError("cannot")
""",
    )
    result.assert_outcomes(xfailed=1)


def test_xfail_without_reason_is_rejected(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
class TestVague(kit_mock.TestMockConformance):
    @pytest.mark.xfail
    def test_plain_text(self):
        pass
""",
    )
    result.assert_outcomes(errors=1)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("    test_plain_text = None\n", "deletes test_plain_text"),
        ("    __test__ = False\n", "sets __test__ = False"),
        ("    pytestmark = pytest.mark.skip(reason='later')\n", "skips the whole class"),
        (
            "    @pytest.mark.skip(reason='later')\n    def test_plain_text(self):\n        pass\n",
            "skips test_plain_text",
        ),
    ],
)
def test_deleting_or_skipping_in_the_class_body_is_a_collection_error(
    pytester: pytest.Pytester, body: str, message: str
) -> None:
    result = run(pytester, "class TestDropped(kit_mock.TestMockConformance):\n" + body)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{message}*"])


@pytest.mark.parametrize(
    "decoration",
    [
        "pytestmark = pytest.mark.skip(reason='later')\n",
        "@pytest.mark.skipif(True, reason='later')\n",
    ],
)
def test_skips_from_decorators_or_the_module_fail(pytester: pytest.Pytester, decoration: str) -> None:
    result = run(pytester, decoration + "class TestSkipped(kit_mock.TestMockConformance):\n    pass\n")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*is a standard conformance test and may not be skipped*"])


def test_check_subclass_names_every_problem() -> None:
    with pytest.raises(ConformanceError, match=r"deletes test_plain_text; overrides test_multi_turn"):
        type(
            "TestBoth",
            (ProviderConformanceTests,),
            {"test_plain_text": None, "test_multi_turn": lambda self: None},
        )
