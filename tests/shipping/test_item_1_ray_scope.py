"""Issue 30 item 1: the suite starts Ray once a run. ``tests/conftest.py`` gives the tests on its Ray to one
pytest-xdist worker by node id prefix; a prefix that no longer names a test (a file or test renamed) would
silently start Ray again on another worker, so each must name tests that exist and use the suite's Ray."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import RAY_TESTS

ROOT = Path(__file__).resolve().parents[2]


def test_item_1_every_ray_test_prefix_names_tests_on_the_suites_ray() -> None:
    for prefix in RAY_TESTS:
        path, _, name = prefix.partition("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        tests = re.findall(rf"^(?:async )?def ({re.escape(name)}\w*)\(([^)]*)", source, flags=re.MULTILINE)
        tests = [(test, arguments) for test, arguments in tests if test.startswith("test_")]
        assert tests, f"{prefix!r} names no test: update RAY_TESTS in tests/conftest.py"
        assert any("ray_address" in arguments for _, arguments in tests), f"no test of {prefix!r} uses ray_address"
