"""Fixtures for tests of the test-support code itself."""

from tests.support.fixtures import fault_server

__all__ = ["fault_server"]
