"""Fixtures for the seed-compatibility tests: the fault-injecting OpenAI server."""

from tests.support.fixtures import fault_server

__all__ = ["fault_server"]
