"""Deployments of a group as local OpenAI-wire servers behind the real openai plugin, and an event recorder."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import llmplex
from llmplex import hookimpl
from tests.support.fault_server import FaultServer

API_KEY = "sk-groups-test-0123456789abcdef"


def instance(server: FaultServer) -> dict[str, Any]:
    """A provider table: the openai plugin speaking Chat Completions to ``server``."""
    return {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": API_KEY}


@contextmanager
def servers(*names: str) -> Iterator[dict[str, FaultServer]]:
    """One started FaultServer per name, stopped afterwards."""
    with ExitStack() as stack:
        yield {name: stack.enter_context(FaultServer()) for name in names}


def config(fakes: Mapping[str, FaultServer], group: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A config whose group ``chat`` spreads over one deployment per fake server (``<name>:gpt-4o-mini``)."""
    table = {"deployments": [{"model": f"{name}:gpt-4o-mini"} for name in fakes], **(group or {})}
    providers = {name: instance(server) for name, server in fakes.items()}
    return {"providers": providers, "groups": {"chat": table}, **extra}


class Recorder:
    """An observer plugin keeping every event it sees."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        self.events.append(event)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def counts(fakes: Mapping[str, FaultServer]) -> dict[str, int]:
    """How many requests each fake server received."""
    return {name: server.request_count for name, server in fakes.items()}


def models(requests: Sequence[Any]) -> list[str]:
    """The model field of each recorded request body."""
    return [r.body.get("model") for r in requests]
