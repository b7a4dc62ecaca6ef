"""One Ray worker of ``llmplex batch --ray``: a Client built from the driver's config, answering rows.

This module never imports Ray: the driver (``llmplex.batching.ray_run``)
wraps ``RowWorker`` with ``ray.remote`` and sends it the config and the
provider environment variables as arguments, which Ray keeps in its object
store (never in the dashboard, a runtime env or a log line).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from llmplex.batching.items import complete_item, settle
from llmplex.batching.records import result_record
from llmplex.client import Client
from llmplex.config.schema import Config
from llmplex.config.sources import ENV_PREFIX

__all__ = ["RowWorker"]


class RowWorker:
    """The client of one worker process; ``run`` answers one row with its journal record."""

    def __init__(self, config: Config, environment: Mapping[str, str]) -> None:
        """Set the driver's provider variables (API keys) in this process, then build the client.

        The driver's ``LLMPLEX_*`` variables are already part of ``config``; the
        worker's own are dropped so that they cannot change it. ``config`` is
        given whole, so every key the driver has wins over a worker host's files.
        """
        for name in [n for n in os.environ if n.startswith(ENV_PREFIX) and n not in environment]:
            del os.environ[name]
        os.environ.update(environment)
        self.client = Client(config.model_dump())

    async def close(self) -> None:
        """Close the client's connections (its HTTP sessions) before the actor is killed."""
        await self.client.aclose()

    async def run(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The record (``{"ok": ..., ...}``) of the row with these complete() arguments."""
        return result_record(await settle(complete_item(self.client, arguments)))
