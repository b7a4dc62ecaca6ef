"""Fixtures of the compatibility suite (issue 13): the fault server and a Client pointed at it."""

from __future__ import annotations

import sys

import pytest

import llmplex
from tests.support.fault_server import FaultServer
from tests.support.fixtures import fault_server

__all__ = ["fault_client", "fault_server"]

# The real weakincentives package (issue 23 item 2) needs Python >= 3.12: its tests run in
# `tox -e compat-weakincentives` (Python 3.13). On an older Python they cannot be installed, so are not collected;
# on 3.12+ without the package they fail at import saying how to install it.
collect_ignore = ["weakincentives_package"] if sys.version_info < (3, 12) else []

FAULT_KEY = "sk-compat-4f9a8b7c6d5e4f3a2b1c0d9e"
"""The key the fault instance sends: realistic, so that 'it never shows' means something."""


def fault_config(server: FaultServer, api: str = "chat") -> dict[str, object]:
    """A config with ``fault:`` = the openai plugin on the fault server, and retries without waits."""
    return {
        "providers": {"fault": {"plugin": "openai", "base_url": server.url, "api_key": FAULT_KEY, "api": api}},
        "throttle": {"base_delay": 0, "max_delay": 0},
    }


@pytest.fixture
def fault_client(fault_server: FaultServer) -> llmplex.Client:
    """A Client whose ``fault:`` prefix speaks Chat Completions to the fault server."""
    return llmplex.Client(fault_config(fault_server))
