"""The pytest side of the conformance kit (entry point ``pytest11: llmplex``).

It imports nothing of llmplex until a test module has imported the kit, and then
turns every standard conformance test dropped by a skip mark into a failure.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

__all__ = ["DroppedConformanceTest", "pytest_collection_modifyitems"]


class DroppedConformanceTest(pytest.Item):
    """Stands in for a standard conformance test that a skip mark would have dropped."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        """Fail with the reason."""
        pytest.fail(self.reason, pytrace=False)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the dropped test is."""
        return self.path, None, self.name


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Replace skip-marked standard conformance tests with failing items."""
    kit = sys.modules.get("llmplex.testing.kit")
    if kit is None:
        return
    from llmplex.testing.enforcement import is_skip_mark, standard_tests

    base = kit.ProviderConformanceTests
    standard = set(standard_tests(base))
    for index, item in enumerate(items):
        cls = getattr(item, "cls", None)
        name = getattr(item, "originalname", item.name)
        if cls is None or not issubclass(cls, base) or name not in standard:
            continue
        if any(is_skip_mark(mark) for mark in item.iter_markers()):
            items[index] = DroppedConformanceTest.from_parent(
                session,
                name=f"{item.nodeid} (skipped conformance test)",
                reason=f"{item.nodeid} is a standard conformance test and may not be skipped; "
                "replace it with a new function marked @pytest.mark.xfail(reason=...)",
            )
