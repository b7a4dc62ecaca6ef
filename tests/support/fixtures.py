"""Pytest fixture for the fault server; import it in a conftest to use it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fault_server import FaultServer


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """A started FaultServer answering successes until told otherwise; stopped after the test."""
    with FaultServer() as server:
        yield server
