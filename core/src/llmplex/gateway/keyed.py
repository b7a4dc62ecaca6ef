"""The gateway of ``llmplex serve``: virtual keys, their caps and budgets, the spend log and the admin API.

``keyed_app`` opens (creating or migrating) the database ``database_url`` names,
keeps the keys' caps in the ``[limits]`` storage, journals every request's row
locally and ships it to the database in batches (replaying what a killed
process left), records who owns the response ids it hands out, and adds
``/admin`` to ``create_app``'s application.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from llmplex.client import Client
from llmplex.gateway.app import create_app
from llmplex.gateway.keys.auth import KeyAuthenticator
from llmplex.gateway.keys.limits import KeyLimits
from llmplex.gateway.keys.owners import ResponseOwners
from llmplex.gateway.keys.store import KeyStore, database_url
from llmplex.gateway.keys.unpriced import unpriced_rates
from llmplex.gateway.ops.admin import admin_routes
from llmplex.gateway.ops.health import journal_checks, readiness_checks
from llmplex.gateway.records import Recorder
from llmplex.gateway.spend.bodies import BodyCollector, collect
from llmplex.gateway.spend.journal import SpendJournal
from llmplex.gateway.spend.log import SpendRecorder, spent_since
from llmplex.reliability.storage import store_for

__all__ = ["keyed_app"]


def keyed_app(
    client: Client,
    master_key: str,
    *,
    extra_recorders: tuple[Recorder, ...] = (),
    journal_dir: Path | None = None,
    **app_args: Any,
) -> Any:
    """The gateway over ``client`` with virtual keys, spend log and admin API (``app.state.keys``: the store,
    ``app.state.spend_recorder``: the recorder, ``app.state.journal``: the spend rows' journal, in
    ``journal_dir``, default ``gateway-journal`` in the user data directory)."""
    config = client.config
    url = database_url(config)
    keys = KeyStore(url)
    limits = KeyLimits(store_for(config.limits), partial(spent_since, keys.reader))
    limits.warm_up()
    bodies = config.gateway.log_bodies
    authenticator = KeyAuthenticator(
        client, keys, limits, master_key, config.gateway.key_cache_seconds, collect if bodies else None
    )
    journal = SpendJournal(url, journal_dir).start()
    recorder = SpendRecorder(journal, limits, bodies, unpriced_rates(config.budget))
    if bodies:
        client.host.register_observer(BodyCollector(), name="llmplex.gateway.spend.bodies")
    if "checks" not in app_args:
        app_args["checks"] = [*readiness_checks(config, degrades=True), *journal_checks(journal)]
    app = create_app(
        client, authenticator, recorders=[recorder, *extra_recorders], dashboard_key=master_key, **app_args
    )
    app.state.pipeline.journal = journal
    app.state.pipeline.owners = ResponseOwners(keys.engine, keys.reader)
    for route in admin_routes(authenticator, master_key):
        app.router.routes.append(route)
    app.state.keys = keys
    app.state.spend_recorder = recorder
    app.state.journal = journal
    return app
