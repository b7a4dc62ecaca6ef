"""Fixtures shared by the plugin suites: the local OpenAI-wire server (SDK range tests)."""

from tests.support.fixtures import fault_server

__all__ = ["fault_server"]
