"""Fixtures of the reliability suite: the fault-injecting OpenAI-wire server."""

from tests.support.fixtures import fault_server

__all__ = ["fault_server"]
