"""Fixtures of the response-cache suite: the counting OpenAI-wire server."""

from tests.support.fixtures import fault_server

__all__ = ["fault_server"]
