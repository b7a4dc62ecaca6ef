"""Fixtures for tests of the test-support code itself."""

from tests.support.fixtures import fault_server as fault_server
